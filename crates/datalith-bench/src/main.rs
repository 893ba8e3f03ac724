fn main() {
    println!("datalith-bench: not yet");
}
