using System.IO.Compression;

namespace Jackdaw.Server.Tests.Infrastructure;

/// <summary>The test corpus in tests/corpus (gzip JSONL), found relative to the repository; JACKDAW_CORPUS overrides.</summary>
internal static class Corpus
{
    public static IEnumerable<string> Lines(string name, int max)
    {
        var folder = Environment.GetEnvironmentVariable("JACKDAW_CORPUS");
        if (string.IsNullOrEmpty(folder))
        {
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null && folder is null; dir = dir.Parent)
            {
                var candidate = Path.Combine(dir.FullName, "tests", "corpus");
                if (File.Exists(Path.Combine(candidate, name + ".jsonl.gz")))
                {
                    folder = candidate;
                }
            }
        }
        if (folder is null)
        {
            throw new InvalidOperationException($"Corpus not found: no tests/corpus above {AppContext.BaseDirectory}; set JACKDAW_CORPUS.");
        }
        using var gzip = new GZipStream(File.OpenRead(Path.Combine(folder, name + ".jsonl.gz")), CompressionMode.Decompress);
        using var reader = new StreamReader(gzip);
        var count = 0;
        while (count++ < max && reader.ReadLine() is { } line)
        {
            yield return line;
        }
    }
}
