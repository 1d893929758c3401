// Trains the blittable short-string dictionary on the corpus and writes
// storage/Blittable/Compression/ShortStringDictionary.Generated.cs.
//
//   dotnet run tools/train-blittable-dictionary.cs -- [corpus-dir] [output-file]
//
// Candidates are substrings of string values (2..24 printable ASCII bytes) that start and end on a
// character-class boundary (letter / digit / other), counted over a sample of the corpus. The
// dictionary is chosen greedily by estimated saving, then refined over a few rounds by encoding
// the sample with an optimal-parse coder and swapping out the entries that saved least. The
// storage encoder parses greedily with one look-ahead (ShortStringCodec.TryEncode) for speed, so
// the sizes printed here are a lower bound for it (on the corpus the greedy parse costs 0.3-0.5
// points of disk-mode size against the optimal one; see perf/RESULTS.md, issue 4).
// Codes: 112 one-byte codes (0x80-0xEF), 3840 two-byte codes (0xF0-0xFE then a byte).
using System.IO.Compression;
using System.Text;
using System.Text.Json;

const int OneByteCodes = 112;
const int TwoByteCodes = 15 * 256;
const int Total = OneByteCodes + TwoByteCodes;
const int MaxEntry = 24;

var corpus = args.Length > 0 ? args[0] : "tests/corpus";
var output = args.Length > 1 ? args[1] : "storage/Blittable/Compression/ShortStringDictionary.Generated.cs";

// Sample: every document of users and companies, every 4th order.
var sample = new List<byte[]>();
foreach (var (file, every) in new[] { ("users", 1), ("companies", 1), ("orders", 4) })
{
    var n = 0;
    using var gz = new GZipStream(File.OpenRead(Path.Combine(corpus, file + ".jsonl.gz")), CompressionMode.Decompress);
    using var reader = new StreamReader(gz, Encoding.UTF8);
    string? line;
    while ((line = reader.ReadLine()) is not null)
    {
        if (n++ % every != 0)
        {
            continue;
        }

        var bytes = Encoding.UTF8.GetBytes(line);
        var json = new Utf8JsonReader(bytes);
        while (json.Read())
        {
            if (json.TokenType == JsonTokenType.String)
            {
                var value = Encoding.UTF8.GetBytes(json.GetString()!);
                if (value.Length >= 4)
                {
                    sample.Add(value);
                }
            }
        }
    }
}

long sampleBytes = sample.Sum(s => (long)s.Length);
Console.WriteLine($"sample: {sample.Count} strings, {sampleBytes} bytes");

static int Class(byte c) => c is >= (byte)'a' and <= (byte)'z' or >= (byte)'A' and <= (byte)'Z' ? 1 : c is >= (byte)'0' and <= (byte)'9' ? 2 : 3;
static bool Printable(byte c) => c is >= 0x20 and < 0x7F;

var counts = new Dictionary<string, int>();
foreach (var s in sample)
{
    for (var i = 0; i < s.Length; i++)
    {
        if (i > 0 && Class(s[i]) == Class(s[i - 1]) && Class(s[i]) != 3)
        {
            continue;
        }

        for (var j = i + 2; j <= Math.Min(s.Length, i + MaxEntry); j++)
        {
            if (!Printable(s[j - 1]))
            {
                break;
            }

            if (j < s.Length && Class(s[j]) == Class(s[j - 1]) && Class(s[j]) != 3)
            {
                continue;
            }

            var key = Encoding.ASCII.GetString(s, i, j - i);
            counts[key] = counts.TryGetValue(key, out var c) ? c + 1 : 1;
        }
    }
}

var pool = counts.Where(kv => kv.Value >= 8 && kv.Key.All(ch => ch < 0x7F && ch >= 0x20))
    .OrderByDescending(kv => (long)kv.Value * (kv.Key.Length - 1))
    .Select(kv => kv.Key)
    .ToList();
Console.WriteLine($"candidates: {counts.Count}, pool: {pool.Count}");

var chosen = pool.Take(Total).ToList();
var next = Total;
for (var round = 0; round < 6; round++)
{
    var (size, usage) = Evaluate(chosen, sample);
    Console.WriteLine($"round {round}: {size} bytes = {100.0 * size / sampleBytes:F1}% of the sample");
    // Order by measured saving; the most used get the one-byte codes.
    var order = Enumerable.Range(0, chosen.Count).OrderByDescending(i => usage[i]).ToList();
    var ranked = order.Select(i => chosen[i]).ToList();
    var keep = ranked.Take(Total - (Total / 8)).Where((_, k) => usage[order[k]] > 0).ToList();
    while (keep.Count < Total && next < pool.Count)
    {
        var candidate = pool[next++];
        if (!keep.Contains(candidate))
        {
            keep.Add(candidate);
        }
    }

    chosen = keep;
}

var (finalSize, finalUsage) = Evaluate(chosen, sample);
chosen = Enumerable.Range(0, chosen.Count).OrderByDescending(i => finalUsage[i]).Select(i => chosen[i]).ToList();
// One-byte codes go to the entries used most often (each use saves one more byte).
var (_, useCount) = Evaluate(chosen, sample, countUses: true);
var byUses = Enumerable.Range(0, chosen.Count).OrderByDescending(i => useCount[i]).ToList();
var final = byUses.Take(OneByteCodes).Select(i => chosen[i]).Concat(byUses.Skip(OneByteCodes).Select(i => chosen[i])).ToList();
var (size2, _) = Evaluate(final, sample);
Console.WriteLine($"final: {size2} bytes = {100.0 * size2 / sampleBytes:F1}% of the sample ({final.Count} entries)");

var text = new StringBuilder();
text.AppendLine("// <auto-generated> by tools/train-blittable-dictionary.cs from the corpus in tests/corpus. Do not edit. </auto-generated>");
text.AppendLine("namespace Jackdaw.Storage.Blittable;");
text.AppendLine();
text.AppendLine("internal static partial class ShortStringCodec");
text.AppendLine("{");
text.AppendLine($"    // {final.Count} entries, each [length byte][ASCII bytes]; the first {OneByteCodes} take one-byte codes.");
text.AppendLine("    private static ReadOnlySpan<byte> DictionaryData =>");
for (var i = 0; i < final.Count; i += 16)
{
    var part = new StringBuilder();
    foreach (var entry in final.Skip(i).Take(16))
    {
        part.Append($"\\u{entry.Length:x4}");
        foreach (var ch in entry)
        {
            part.Append(ch switch { '"' => "\\\"", '\\' => "\\\\", _ => ch.ToString() });
        }
    }

    text.Append($"        \"{part}\"u8");
    text.AppendLine(i + 16 < final.Count ? " +" : ";");
}

text.AppendLine("}");
File.WriteAllText(output, text.ToString());
Console.WriteLine($"wrote {output}");

static (long Size, long[] Usage) Evaluate(List<string> entries, List<byte[]> sample, bool countUses = false)
{
    var bytes = entries.Select(e => Encoding.ASCII.GetBytes(e)).ToArray();
    var byPrefix = new Dictionary<int, List<int>>();
    for (var i = 0; i < bytes.Length; i++)
    {
        var key = (bytes[i][0] << 8) | bytes[i][1];
        if (!byPrefix.TryGetValue(key, out var list))
        {
            byPrefix[key] = list = new List<int>();
        }

        list.Add(i);
    }

    var usage = new long[entries.Count];
    long total = 0;
    var cost = new int[1];
    var choice = new int[1];
    foreach (var s in sample)
    {
        if (cost.Length < s.Length + 1)
        {
            cost = new int[s.Length * 2 + 1];
            choice = new int[s.Length * 2 + 1];
        }

        cost[s.Length] = 0;
        for (var i = s.Length - 1; i >= 0; i--)
        {
            cost[i] = (s[i] < 0x80 ? 1 : 2) + cost[i + 1];
            choice[i] = -1;
            if (i + 1 < s.Length && byPrefix.TryGetValue((s[i] << 8) | s[i + 1], out var list))
            {
                foreach (var e in list)
                {
                    var entry = bytes[e];
                    if (i + entry.Length <= s.Length && s.AsSpan(i, entry.Length).SequenceEqual(entry))
                    {
                        var c = (e < OneByteCodes ? 1 : 2) + cost[i + entry.Length];
                        if (c < cost[i])
                        {
                            cost[i] = c;
                            choice[i] = e;
                        }
                    }
                }
            }
        }

        if (cost[0] >= s.Length)
        {
            total += s.Length;
            continue;
        }

        total += cost[0];
        for (var i = 0; i < s.Length;)
        {
            if (choice[i] < 0)
            {
                i++;
                continue;
            }

            var e = choice[i];
            usage[e] += countUses ? 1 : bytes[e].Length - (e < OneByteCodes ? 1 : 2);
            i += bytes[e].Length;
        }
    }

    return (total, usage);
}
