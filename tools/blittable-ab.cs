#:project ../storage/Jackdaw.Storage.csproj
#:property TreatWarningsAsErrors=false
#:property EnforceCodeStyleInBuild=false
#:property Optimize=true

// Interleaved A/B timing of blittable against System.Text.Json on the corpus, for a machine whose
// load drifts from minute to minute (see docs/performance.md): each round times the reference, then
// ours, on the same documents; the median of the per-round ratios is reported.
//
//   dotnet run -c Release tools/blittable-ab.cs -- [corpus-dir] [rounds]
using System.Buffers;
using System.Diagnostics;
using System.IO.Compression;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

var corpus = args.Length > 0 ? args[0] : "tests/corpus";
var rounds = args.Length > 1 ? int.Parse(args[1]) : 21;

foreach (var file in new[] { "users", "companies" })
{
    var lines = Load(Path.Combine(corpus, file + ".jsonl.gz"), file == "users" ? 18_801 : 2_000);
    using var context = new JsonOperationContext();
    var disk = lines.Select(l => { var b = context.Parse(l, BlittableMode.Disk).ToArray(); context.Reset(); return b; }).ToArray();
    var memory = lines.Select(l => { var b = context.Parse(l, BlittableMode.Memory).ToArray(); context.Reset(); return b; }).ToArray();
    var documents = lines.Select(l => JsonDocument.Parse(l)).ToArray();
    var output = new ArrayBufferWriter<byte>(1 << 20);
    var writer = new Utf8JsonWriter(output);
    long sink = 0;
    var firstName = new BlittablePropertyName("FirstName");
    var age = new BlittablePropertyName("Age");
    var active = new BlittablePropertyName("Active");

    void JsonDocumentParse() { foreach (var l in lines) { using var d = JsonDocument.Parse(l); sink += d.RootElement.ValueKind == JsonValueKind.Object ? 1 : 0; } }
    void ParseIn(BlittableMode mode) { for (var i = 0; i < lines.Length; i++) { sink += context.Parse(lines[i], mode).Length; if ((i & 63) == 63) context.Reset(); } context.Reset(); }
    void JsonDocumentWrite() { foreach (var d in documents) { output.ResetWrittenCount(); writer.Reset(output); d.WriteTo(writer); writer.Flush(); sink += output.WrittenCount; } }
    void WriteAll(byte[][] docs) { foreach (var d in docs) { output.ResetWrittenCount(); BlittableJsonWriter.WriteTo(d, output); sink += output.WrittenCount; } }
    void JsonDocumentRead()
    {
        foreach (var d in documents)
        {
            var root = d.RootElement;
            if (root.TryGetProperty("FirstName"u8, out var n) && n.ValueKind == JsonValueKind.String) sink++;
            if (root.TryGetProperty("Age"u8, out var a)) sink += a.GetInt64();
            if (root.TryGetProperty("Active"u8, out var b) && b.GetBoolean()) sink++;
        }
    }

    void BlittableRead()
    {
        foreach (var d in disk)
        {
            var root = BlittableReader.Open(d);
            if (root.TryGet(ref firstName, out var n) && n.Type == BlittableToken.String) sink++;
            if (root.TryGet(ref age, out var a) && a.TryGetInt64(out var years)) sink += years;
            if (root.TryGet(ref active, out var b) && b.GetBoolean()) sink++;
        }
    }

    Compare(file, "parse memory vs JsonDocument.Parse", JsonDocumentParse, () => ParseIn(BlittableMode.Memory), lines.Length, rounds);
    Compare(file, "parse disk vs JsonDocument.Parse", JsonDocumentParse, () => ParseIn(BlittableMode.Disk), lines.Length, rounds);
    if (file == "users")
    {
        Compare(file, "read 3 properties (hint) vs TryGetProperty", JsonDocumentRead, BlittableRead, lines.Length, rounds);
    }

    Compare(file, "write disk vs JsonDocument.WriteTo", JsonDocumentWrite, () => WriteAll(disk), lines.Length, rounds);
    Compare(file, "write memory vs JsonDocument.WriteTo", JsonDocumentWrite, () => WriteAll(memory), lines.Length, rounds);
    GC.KeepAlive(sink);
}

static void Compare(string file, string what, Action reference, Action ours, int documents, int rounds)
{
    // Warm up for half a second (at least twice each), so tiered compilation has promoted both sides'
    // hot methods before the first timed round; a single call left the first rounds 2-5x slower.
    var warm = Stopwatch.StartNew();
    for (var w = 0; w < 2 || warm.ElapsedMilliseconds < 500; w++)
    {
        reference();
        ours();
    }

    var ratios = new List<double>();
    double referenceTotal = 0, oursTotal = 0;
    for (var r = 0; r < rounds; r++)
    {
        var a = Time(reference, documents);
        var b = Time(ours, documents);
        ratios.Add(b / a);
        referenceTotal += a;
        oursTotal += b;
    }

    ratios.Sort();
    Console.WriteLine($"| {file} | {what} | {referenceTotal / rounds:F0} ns | {oursTotal / rounds:F0} ns | {ratios[rounds / 2]:F2} | {ratios[rounds / 4]:F2}-{ratios[3 * rounds / 4]:F2} |");
}

static double Time(Action action, int documents)
{
    var watch = Stopwatch.StartNew();
    action();
    return watch.Elapsed.TotalNanoseconds / documents;
}

static byte[][] Load(string path, int max)
{
    var lines = new List<byte[]>();
    using var gzip = new GZipStream(File.OpenRead(path), CompressionMode.Decompress);
    using var reader = new StreamReader(gzip);
    string? line;
    while (lines.Count < max && (line = reader.ReadLine()) is not null)
    {
        lines.Add(System.Text.Encoding.UTF8.GetBytes(line));
    }

    return lines.ToArray();
}
