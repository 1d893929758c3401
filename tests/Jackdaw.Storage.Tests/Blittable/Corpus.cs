using System.IO.Compression;

namespace Jackdaw.Storage.Tests.Blittable;

/// <summary>The test corpus in tests/corpus (gzip JSONL), read once per test run and kept in memory.</summary>
internal static class Corpus
{
    public static readonly string[] Files = ["users", "companies", "orders"];

    private static readonly Dictionary<string, byte[][]> Cache = new();

    public static string Directory
    {
        get
        {
            var fromEnvironment = Environment.GetEnvironmentVariable("JACKDAW_CORPUS");
            if (!string.IsNullOrEmpty(fromEnvironment))
            {
                return fromEnvironment;
            }

            // The tests run from tests/Jackdaw.Storage.Tests/bin/<config>/net10.0, inside the repository.
            for (var dir = new DirectoryInfo(AppContext.BaseDirectory); dir is not null; dir = dir.Parent)
            {
                var candidate = Path.Combine(dir.FullName, "tests", "corpus");
                if (File.Exists(Path.Combine(candidate, "users.jsonl.gz")))
                {
                    return candidate;
                }
            }

            throw new InvalidOperationException(
                $"Corpus not found: no tests/corpus above {AppContext.BaseDirectory}; set JACKDAW_CORPUS to a folder holding users.jsonl.gz.");
        }
    }

    public static byte[][] Load(string name)
    {
        lock (Cache)
        {
            if (Cache.TryGetValue(name, out var lines))
            {
                return lines;
            }

            var list = new List<byte[]>();
            using var file = File.OpenRead(Path.Combine(Directory, name + ".jsonl.gz"));
            using var gzip = new GZipStream(file, CompressionMode.Decompress);
            using var buffered = new BufferedStream(gzip, 1 << 16);
            var line = new MemoryStream();
            var chunk = new byte[1 << 16];
            int read;
            while ((read = buffered.Read(chunk, 0, chunk.Length)) > 0)
            {
                var start = 0;
                for (var i = 0; i < read; i++)
                {
                    if (chunk[i] == (byte)'\n')
                    {
                        line.Write(chunk, start, i - start);
                        if (line.Length > 0)
                        {
                            list.Add(line.ToArray());
                        }

                        line.SetLength(0);
                        start = i + 1;
                    }
                }

                line.Write(chunk, start, read - start);
            }

            if (line.Length > 0)
            {
                list.Add(line.ToArray());
            }

            lines = list.ToArray();
            Cache[name] = lines;
            return lines;
        }
    }
}
