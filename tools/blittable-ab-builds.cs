#:project ../storage/Jackdaw.Storage.csproj
#:property TreatWarningsAsErrors=false
#:property EnforceCodeStyleInBuild=false
#:property Optimize=true

// Same-process A/B of two builds of Jackdaw.Storage (for changes too small for tools/blittable-ab.cs,
// whose separate runs drift by 30% on this machine): loads both DLLs into their own
// AssemblyLoadContext, checks they write identical JSON, then times JsonDocument.WriteTo, A and B
// (alternating which goes first) on the same documents each round, by the thread's CPU time.
//
//   cd storage && dotnet build -c Release            (and the same in a `git archive` copy of the base)
//   dotnet run -c Release tools/blittable-ab-builds.cs -- A/Jackdaw.Storage.dll B/Jackdaw.Storage.dll [rounds] [users documents] [corpora]
//
// Prints min ns/doc and the median per-round B/A ratios (disk mode and memory mode).
using System.Buffers;
using System.IO.Compression;
using System.Reflection;
using System.Runtime.InteropServices;
using System.Runtime.Loader;
using System.Text.Json;

var rounds = args.Length > 2 ? int.Parse(args[2]) : 31;
var corpus = Environment.GetEnvironmentVariable("JACKDAW_CORPUS") ?? "tests/corpus";
var impls = new[] { Load(args[0], "A"), Load(args[1], "B") };
foreach (var file in (args.Length > 4 ? args[4] : "users,companies").Split(','))
{
    var lines = LoadLines(Path.Combine(corpus, file + ".jsonl.gz"), file == "users" ? (args.Length > 3 ? int.Parse(args[3]) : 18_801) : 2_000);
    var documents = lines.Select(l => JsonDocument.Parse(l)).ToArray();
    var disk = impls.Select(im => lines.Select(l => im.Parse(l, 1)).ToArray()).ToArray();
    var memory = impls.Select(im => lines.Select(l => im.Parse(l, 0)).ToArray()).ToArray();
    var output = new ArrayBufferWriter<byte>(1 << 20);
    var writer = new Utf8JsonWriter(output);
    long sink = 0;
    for (var k = 0; k < lines.Length; k++)
    {
        output.ResetWrittenCount(); impls[0].Write(disk[0][k], output); var a = output.WrittenSpan.ToArray();
        output.ResetWrittenCount(); impls[1].Write(disk[1][k], output); if (!output.WrittenSpan.SequenceEqual(a)) { Console.WriteLine($"{file} doc {k}: outputs differ"); break; }
    }
    var t = new List<double>[5]; for (var i = 0; i < 5; i++) t[i] = new();
    for (var round = 0; round < rounds; round++)
    {
        var order = round % 2 == 0 ? new[] { 0, 1 } : new[] { 1, 0 };
        var c0 = Cpu.Now();
        foreach (var d in documents) { output.ResetWrittenCount(); writer.Reset(output); d.WriteTo(writer); writer.Flush(); sink += output.WrittenCount; }
        t[0].Add(Cpu.Now() - c0);
        foreach (var v in order)
        {
            var w = impls[v].Write; var docs = disk[v];
            c0 = Cpu.Now();
            foreach (var d in docs) { output.ResetWrittenCount(); w(d, output); sink += output.WrittenCount; }
            t[1 + v].Add(Cpu.Now() - c0);
        }
        foreach (var v in order)
        {
            var w = impls[v].Write; var docs = memory[v];
            c0 = Cpu.Now();
            foreach (var d in docs) { output.ResetWrittenCount(); w(d, output); sink += output.WrittenCount; }
            t[3 + v].Add(Cpu.Now() - c0);
        }
    }
    double Med(IEnumerable<double> x) { var l = x.OrderBy(v => v).ToList(); return l[l.Count / 2]; }
    double N(int i) => t[i].Skip(1).Min() / lines.Length;
    var skip = Enumerable.Range(1, rounds - 1);
    Console.WriteLine($"{file,-10} min ns/doc JsonDocument {N(0):F0} | disk A {N(1):F0} B {N(2):F0} | memory A {N(3):F0} B {N(4):F0} || median disk/JsonDocument A {Med(skip.Select(r => t[1][r] / t[0][r])):F3} B {Med(skip.Select(r => t[2][r] / t[0][r])):F3}; B/A disk {Med(skip.Select(r => t[2][r] / t[1][r])):F3} memory {Med(skip.Select(r => t[4][r] / t[3][r])):F3}");
    GC.KeepAlive(sink);
}

static Impl Load(string path, string name)
{
    var alc = new Alc(path, name);
    var asm = alc.LoadFromAssemblyPath(Path.GetFullPath(path));
    var writerType = asm.GetType("Jackdaw.Storage.Blittable.BlittableJsonWriter")!;
    var write = writerType.GetMethod("WriteTo", new[] { typeof(ReadOnlySpan<byte>), typeof(IBufferWriter<byte>) })!;
    var ctxType = asm.GetType("Jackdaw.Storage.Blittable.JsonOperationContext")!;
    var modeType = asm.GetType("Jackdaw.Storage.Blittable.BlittableMode")!;
    var ctx = Activator.CreateInstance(ctxType)!;
    var parse = ctxType.GetMethod("Parse", new[] { typeof(ReadOnlySequence<byte>), modeType })!;
    var reset = ctxType.GetMethod("Reset")!;
    return new Impl((WriteFn)Delegate.CreateDelegate(typeof(WriteFn), write), (bytes, mode) =>
    {
        var doc = parse.Invoke(ctx, new object[] { new ReadOnlySequence<byte>(bytes), Enum.ToObject(modeType, mode) })!;
        var arr = (byte[])doc.GetType().GetMethod("ToArray")!.Invoke(doc, null)!;
        reset.Invoke(ctx, null);
        return arr;
    });
}

static byte[][] LoadLines(string path, int max)
{
    var lines = new List<byte[]>();
    using var gzip = new GZipStream(File.OpenRead(path), CompressionMode.Decompress);
    using var reader = new StreamReader(gzip);
    string? line;
    while (lines.Count < max && (line = reader.ReadLine()) is not null) lines.Add(System.Text.Encoding.UTF8.GetBytes(line));
    return lines.ToArray();
}

delegate void WriteFn(ReadOnlySpan<byte> document, IBufferWriter<byte> output);
record Impl(WriteFn Write, Func<byte[], int, byte[]> Parse);
class Alc(string path, string name) : AssemblyLoadContext(name)
{
    protected override Assembly? Load(AssemblyName assemblyName) => null;
}
static class Cpu
{
    [StructLayout(LayoutKind.Sequential)] struct Timespec { public long Sec; public long Nsec; }
    [DllImport("libc", EntryPoint = "clock_gettime")] static extern int ClockGetTime(int clock, out Timespec ts);
    public static double Now() { ClockGetTime(3, out var ts); return ts.Sec * 1e9 + ts.Nsec; }
}
