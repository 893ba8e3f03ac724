// The Lucene peer of workload S (datalith-bench search): BM25 (IndexSearcher's default
// similarity), StandardTokenizer + LowerCaseFilter (StandardAnalyzer with an empty stop set),
// queries in the classic QueryParser syntax (the text Datalith's search reads too).
//
// Usage: Search DOCS.tsv QUERIES.tsv WORK_DIR OUT.tsv BATCH ROUNDS WARM
// Indexes the first WARM documents into WORK_DIR/warmup (untimed, then deleted: the JIT), then WORK_DIR/nosync (a directory whose sync is a no-op), then into
// WORK_DIR/durable (FSDirectory: every commit fsyncs), a commit every BATCH documents, one
// RESULT line each; then on the durable index: one untimed round over every query (its count,
// top-10, and the documents tied with the 10th score), then ROUNDS timed rounds (top-10 call,
// count call); a line per query in OUT.tsv (protocol: crates/datalith-bench/src/search/external.rs).
// The query cache is off: the rounds repeat each query, and a cache would answer from memory.

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LeafReaderContext;
import org.apache.lucene.index.NumericDocValues;
import org.apache.lucene.index.ReaderUtil;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;
import org.apache.lucene.store.FilterDirectory;

public final class Search {
    static final Analyzer ANALYZER = new StandardAnalyzer(CharArraySet.EMPTY_SET);

    public static void main(String[] a) throws Exception {
        if (a.length != 7) {
            System.err.println("usage: Search DOCS.tsv QUERIES.tsv WORK_DIR OUT.tsv BATCH ROUNDS WARM");
            System.exit(64);
        }
        try {
            run(Path.of(a[0]), Path.of(a[1]), Path.of(a[2]), Path.of(a[3]),
                Integer.parseInt(a[4]), Integer.parseInt(a[5]), Integer.parseInt(a[6]));
        } catch (Throwable e) {
            e.printStackTrace();
            System.out.println("RESULT {\"task\":\"error\",\"message\":\"" + esc(e.toString()) + "\"}");
            System.exit(1);
        }
    }

    static String esc(String s) {
        return s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", " ").replace("\t", " ");
    }

    static void run(Path docsTsv, Path queriesTsv, Path work, Path out, int batch, int rounds,
                    int warm) throws Exception {
        List<Long> ids = new ArrayList<>();
        List<String> texts = new ArrayList<>();
        for (String line : Files.readAllLines(docsTsv, StandardCharsets.UTF_8)) {
            int tab = line.indexOf('\t');
            ids.add(Long.parseLong(line.substring(0, tab)));
            texts.add(line.substring(tab + 1));
        }
        Path warmDir = work.resolve("warmup");
        Files.createDirectories(warmDir);
        int w = Math.min(warm, ids.size());
        index(warmDir, ids.subList(0, w), texts.subList(0, w), batch, false);
        try (var paths = Files.walk(warmDir)) {
            paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        for (String mode : new String[] {"nosync", "durable"}) {
            Path dir = work.resolve(mode);
            Files.createDirectories(dir);
            long t0 = System.nanoTime();
            index(dir, ids, texts, batch, mode.equals("durable"));
            double secs = (System.nanoTime() - t0) / 1e9;
            System.out.println("RESULT {\"task\":\"index\",\"mode\":\"" + mode + "\",\"seconds\":"
                + secs + ",\"docs\":" + ids.size() + "}");
        }
        List<String[]> queries = new ArrayList<>();
        for (String line : Files.readAllLines(queriesTsv, StandardCharsets.UTF_8)) {
            queries.add(line.split("\t"));
        }
        try (Directory d = FSDirectory.open(work.resolve("durable"));
             DirectoryReader r = DirectoryReader.open(d)) {
            query(r, queries, rounds, out);
        }
    }

    static void index(Path dir, List<Long> ids, List<String> texts, int batch, boolean durable)
            throws Exception {
        Directory d = FSDirectory.open(dir);
        if (!durable) {
            d = new FilterDirectory(d) {
                @Override
                public void sync(Collection<String> names) {}

                @Override
                public void syncMetaData() {}
            };
        }
        IndexWriterConfig cfg = new IndexWriterConfig(ANALYZER)
            .setOpenMode(IndexWriterConfig.OpenMode.CREATE);
        try (IndexWriter w = new IndexWriter(d, cfg)) {
            for (int i = 0; i < ids.size(); i++) {
                Document doc = new Document();
                doc.add(new TextField("body", texts.get(i), Field.Store.NO));
                doc.add(new NumericDocValuesField("id", ids.get(i)));
                w.addDocument(doc);
                if ((i + 1) % batch == 0) {
                    w.commit();
                }
            }
            w.commit();
        }
        d.close();
    }

    /** The external ids of `hits`, read from the `id` doc values. */
    static long[] ids(IndexSearcher s, ScoreDoc[] hits, int from, int to) throws Exception {
        List<LeafReaderContext> leaves = s.getIndexReader().leaves();
        long[] out = new long[Math.max(0, to - from)];
        for (int i = from; i < to; i++) {
            LeafReaderContext leaf = leaves.get(ReaderUtil.subIndex(hits[i].doc, leaves));
            NumericDocValues dv = leaf.reader().getNumericDocValues("id");
            if (dv == null || !dv.advanceExact(hits[i].doc - leaf.docBase)) {
                throw new IllegalStateException("no id for document " + hits[i].doc);
            }
            out[i - from] = dv.longValue();
        }
        return out;
    }

    static String join(long[] xs) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < xs.length; i++) {
            if (i > 0) sb.append(',');
            sb.append(xs[i]);
        }
        return sb.toString();
    }

    static void query(DirectoryReader r, List<String[]> queries, int rounds, Path out)
            throws Exception {
        IndexSearcher s = new IndexSearcher(r);
        s.setQueryCache(null);
        QueryParser qp = new QueryParser("body", ANALYZER);
        int n = queries.size();
        long[] counts = new long[n];
        long[][] tops = new long[n][];
        long[][] ties = new long[n][];
        long[][] topNs = new long[n][rounds];
        long[][] countNs = new long[n][rounds];
        for (int i = 0; i < n; i++) {
            Query q = qp.parse(queries.get(i)[2]);
            counts[i] = s.count(q);
            TopDocs all = s.search(q, Math.max(1, r.numDocs()));
            int k = Math.min(10, all.scoreDocs.length);
            tops[i] = ids(s, all.scoreDocs, 0, k);
            int end = k;
            while (k == 10 && end < all.scoreDocs.length
                   && all.scoreDocs[end].score == all.scoreDocs[9].score) {
                end++;
            }
            ties[i] = ids(s, all.scoreDocs, k, end);
            long[] again = ids(s, s.search(q, 10).scoreDocs, 0, k);
            if (!java.util.Arrays.equals(again, tops[i])) {
                throw new IllegalStateException("query " + i + ": top-10 differs from the first 10 of all");
            }
        }
        for (int round = 0; round < rounds; round++) {
            for (int i = 0; i < n; i++) {
                String text = queries.get(i)[2];
                long t0 = System.nanoTime();
                Query q = qp.parse(text);
                TopDocs td = s.search(q, 10);
                long[] top = ids(s, td.scoreDocs, 0, td.scoreDocs.length);
                topNs[i][round] = System.nanoTime() - t0;
                t0 = System.nanoTime();
                long c = s.count(qp.parse(text));
                countNs[i][round] = System.nanoTime() - t0;
                if (c != counts[i] || !java.util.Arrays.equals(top, tops[i])) {
                    throw new IllegalStateException("query " + i + " answered differently in round " + round);
                }
            }
        }
        try (BufferedWriter w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            for (int i = 0; i < n; i++) {
                w.write(queries.get(i)[0] + "\t" + counts[i] + "\t" + join(tops[i]) + "\t"
                    + join(ties[i]) + "\t" + join(topNs[i]) + "\t" + join(countNs[i]) + "\n");
            }
        }
    }
}
