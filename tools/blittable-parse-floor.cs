#:project ../storage/Jackdaw.Storage.csproj
#:property TreatWarningsAsErrors=false
#:property EnforceCodeStyleInBuild=false
#:property Optimize=true
#:property AllowUnsafeBlocks=true

// How fast can any builder fed by Utf8JsonReader be? Times, against JsonDocument.Parse in the same
// rounds (thread CPU time, median of per-round ratios):
//   reader     Utf8JsonReader alone, as in `while (reader.Read())`;
//   floor      the reader plus the least a blittable builder must do per token (see FloorBuilder:
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
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

var corpusDir = args.Length > 0 ? args[0] : "/work/shared/data";
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

/// <summary>The least per-token work of a builder that writes a self-contained binary document.</summary>
sealed class FloorBuilder
{
    private static readonly JsonReaderOptions Options = new() { MaxDepth = 264 };
    private readonly byte[] _output = new byte[1 << 20];
    private readonly int[] _entryName = new int[4096];
    private readonly int[] _entryPosition = new int[4096];
    private readonly byte[] _entryType = new byte[4096];
    private readonly int[] _frames = new int[600];
    private readonly byte[][] _names = new byte[512][];
    private readonly int[] _successor = Enumerable.Repeat(-1, 513).ToArray();
    private int _entryCount;
    private int _nameCount;
    private int _previousName;
    private int _currentName;

    public int Build(ReadOnlySpan<byte> json)
    {
        var reader = new Utf8JsonReader(json, isFinalBlock: true, new JsonReaderState(Options));
        var output = _output;
        var position = 0;
        var depth = 0;
        _entryCount = 0;
        _previousName = -1;
        while (reader.Read())
        {
            switch (reader.TokenType)
            {
                case JsonTokenType.PropertyName:
                    _currentName = Name(reader.ValueSpan);
                    break;
                case JsonTokenType.String:
                {
                    int length;
                    if (reader.ValueIsEscaped)
                    {
                        length = reader.CopyString(output.AsSpan(position + 2));
                    }
                    else
                    {
                        var value = reader.ValueSpan;
                        value.CopyTo(output.AsSpan(position + 2));
                        length = value.Length;
                    }

                    Unsafe.WriteUnaligned(ref output[position], (ushort)length);
                    Add(position, 5);
                    position += length + 2;
                    break;
                }

                case JsonTokenType.Number:
                {
                    var value = reader.ValueSpan;
                    value.CopyTo(output.AsSpan(position + 1));
                    output[position] = (byte)value.Length;
                    Add(position, 4);
                    position += value.Length + 1;
                    break;
                }

                case JsonTokenType.True:
                    Add(-1, 1);
                    break;
                case JsonTokenType.False:
                    Add(-1, 2);
                    break;
                case JsonTokenType.Null:
                    Add(-1, 3);
                    break;
                case JsonTokenType.StartObject or JsonTokenType.StartArray:
                    _frames[depth++] = _entryCount;
                    _frames[depth++] = _currentName;
                    break;
                default:
                {
                    // EndObject or EndArray: one row per entry, then the container is an entry of its parent.
                    _currentName = _frames[--depth];
                    var start = _frames[--depth];
                    var table = position;
                    for (var i = start; i < _entryCount; i++)
                    {
                        var back = _entryPosition[i] < 0 ? 0 : table - _entryPosition[i];
                        Unsafe.WriteUnaligned(ref output[position], (uint)(_entryName[i] | (back << 8) | (_entryType[i] << 24)));
                        position += 4;
                    }

                    _entryCount = start;
                    Add(table, 6);
                    break;
                }
            }
        }

        return position;
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Add(int position, byte type)
    {
        var entry = _entryCount++;
        _entryName[entry] = _currentName;
        _entryPosition[entry] = position;
        _entryType[entry] = type;
    }

    private int Name(ReadOnlySpan<byte> name)
    {
        var guess = _successor[_previousName + 1];
        if (guess < 0 || !name.SequenceEqual(_names[guess]))
        {
            guess = 0;
            while (guess < _nameCount && !name.SequenceEqual(_names[guess]))
            {
                guess++;
            }

            if (guess == _nameCount)
            {
                _nameCount++;
                _names[guess] = name.ToArray();
            }

            _successor[_previousName + 1] = guess;
        }

        _previousName = guess;
        return guess;
    }
}
