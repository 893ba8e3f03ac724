fn main() {
    println!("datalith: not yet");
}
