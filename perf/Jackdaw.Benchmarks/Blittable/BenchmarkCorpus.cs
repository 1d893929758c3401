using System.IO.Compression;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>Loads lines of the shared corpus (gzip JSONL) for the blittable benchmarks.</summary>
internal static class BenchmarkCorpus
{
    public static byte[][] Load(string name, int max)
    {
        var directory = Environment.GetEnvironmentVariable("JACKDAW_CORPUS");
        if (string.IsNullOrEmpty(directory))
        {
            var dir = new DirectoryInfo(AppContext.BaseDirectory);
            while (dir is not null && !File.Exists(Path.Combine(dir.FullName, "shared", "data", "users.jsonl.gz")))
            {
                dir = dir.Parent;
            }

            directory = dir is null ? "/work/shared/data" : Path.Combine(dir.FullName, "shared", "data");
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
