#:project ../perf/Jackdaw.Benchmarks/Jackdaw.Benchmarks.csproj
#:property TreatWarningsAsErrors=false
#:property EnforceCodeStyleInBuild=false
#:property Optimize=true
#:property AllowUnsafeBlocks=true

// How fast can any builder fed by Utf8JsonReader be? Times, against JsonDocument.Parse in the same
// rounds (thread CPU time, median of per-round ratios):
//   reader     Utf8JsonReader alone, as in `while (reader.Read())`;
//   floor      the reader plus the least a blittable builder must do per token (see perf/Jackdaw.Benchmarks/Blittable/FloorBuilder.cs:
//              strings copied, unescaped when escaped, names found by a successor guess, one
//              4-byte table row per property), with everything else a real builder needs left
//              out: no sorted order, no duplicate check, no UTF-8 check, no escape positions, no
//              names area, no variable-width rows;
//   blittable  JsonOperationContext.Parse in Memory mode.
// If `floor` is already near 1.0, no builder on top of Utf8JsonReader reaches "at least as fast as
// JsonDocument.Parse" on that corpus.
//
//   dotnet run -c Release tools/blittable-parse-floor.cs -- [corpus-dir] [rounds] [users,companies]
using System.IO.Compression;
using System.Runtime.InteropServices;
using System.Text.Json;
using Jackdaw.Benchmarks.Blittable;
using Jackdaw.Storage.Blittable;

var corpusDir = args.Length > 0 ? args[0] : "tests/corpus";
var rounds = args.Length > 1 ? int.Parse(args[1]) : 21;
var files = args.Length > 2 ? args[2].Split(',') : ["companies", "users"];

foreach (var file in files)
{
    var lines = new List<byte[]>();
    using (var gzip = new GZipStream(File.OpenRead(Path.Combine(corpusDir, file + ".jsonl.gz")), CompressionMode.Decompress))
    using (var text = new StreamReader(gzip))
    {
        while (lines.Count < 2000 && text.ReadLine() is { } line)
        {
            lines.Add(System.Text.Encoding.UTF8.GetBytes(line));
        }
    }

    using var context = new JsonOperationContext();
    var floor = new FloorBuilder();
    long sink = 0;
    Action reference = () =>
    {
        foreach (var line in lines)
        {
            using var document = JsonDocument.Parse(line);
            sink++;
        }
    };
    (string Name, Action Run)[] candidates =
    [
        ("reader", () =>
        {
            foreach (var line in lines)
            {
                var reader = new Utf8JsonReader(line);
                while (reader.Read())
                {
                    sink++;
                }
            }
        }),
        ("floor", () =>
        {
            foreach (var line in lines)
            {
                sink += floor.Build(line);
            }
        }),
        ("blittable", () =>
        {
            for (var i = 0; i < lines.Count; i++)
            {
                sink += context.Parse(lines[i], BlittableMode.Memory).Length;
                if ((i & 63) == 63)
                {
                    context.Reset();
                }
            }

            context.Reset();
        }),
    ];

    for (var i = 0; i < 30; i++)
    {
        reference();
        foreach (var (_, run) in candidates)
        {
            run();
        }
    }

    var ratios = candidates.Select(_ => new List<double>()).ToArray();
    var nanos = new List<double>();
    for (var r = 0; r < rounds; r++)
    {
        for (var k = 0; k < candidates.Length; k++)
        {
            var before = Time(reference);
            var ours = Time(candidates[k].Run);
            var after = Time(reference);
            ratios[k].Add(ours * 2 / (before + after));
            nanos.Add((before + after) / 2 / lines.Count);
        }
    }

    nanos.Sort();
    Console.WriteLine($"{file}: JsonDocument.Parse {nanos[nanos.Count / 2]:F0} ns per document (median)");
    for (var k = 0; k < candidates.Length; k++)
    {
        var list = ratios[k];
        list.Sort();
        Console.WriteLine($"  {candidates[k].Name,-9} / JsonDocument.Parse  {list[list.Count / 2]:F3} (IQR {list[list.Count / 4]:F3}-{list[3 * list.Count / 4]:F3})");
    }

    GC.KeepAlive(sink);
}

static double Time(Action run)
{
    var start = ThreadCpu();
    run();
    return ThreadCpu() - start;
}

static double ThreadCpu()
{
    clock_gettime(3, out var time);   // CLOCK_THREAD_CPUTIME_ID: time descheduled does not count
    return (time.Seconds * 1e9) + time.Nanoseconds;
}

[DllImport("libc")]
static extern int clock_gettime(int clock, out TimeSpec time);

struct TimeSpec
{
    public long Seconds;
    public long Nanoseconds;
}
