using System.IO.Compression;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>Loads lines of the test corpus (tests/corpus) (gzip JSONL) for the blittable benchmarks.</summary>
internal static class BenchmarkCorpus
{
    public static byte[][] Load(string name, int max)
    {
        var directory = Environment.GetEnvironmentVariable("JACKDAW_CORPUS");
        if (string.IsNullOrEmpty(directory))
        {
            // BenchmarkDotNet runs from a generated folder under perf/Jackdaw.Benchmarks/bin, inside the repository.
            var dir = new DirectoryInfo(AppContext.BaseDirectory);
            while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "tests", "corpus", "users.jsonl.gz")))
            {
                dir = dir.Parent;
            }

            directory = dir is null
                ? throw new InvalidOperationException($"Corpus not found: no tests/corpus above {AppContext.BaseDirectory}; set JACKDAW_CORPUS.")
                : Path.Combine(dir.FullName, "tests", "corpus");
        }

        var lines = new List<byte[]>();
        using var gzip = new GZipStream(File.OpenRead(Path.Combine(directory, name + ".jsonl.gz")), CompressionMode.Decompress);
        using var reader = new StreamReader(gzip);
        string? line;
        while (lines.Count < max && (line = reader.ReadLine()) is not null)
        {
            lines.Add(System.Text.Encoding.UTF8.GetBytes(line));
        }

        return lines.ToArray();
    }
}
