extern alias basebuild;
using System.Diagnostics;
using System.IO.Compression;
using System.Text.Json;
using Jackdaw.Storage.Blittable;
using OldContext = basebuild::Jackdaw.Storage.Blittable.JsonOperationContext;
using OldMode = basebuild::Jackdaw.Storage.Blittable.BlittableMode;

// Same-process interleaved A/B of blittable parse: JsonDocument.Parse, the base build's parse and
// this tree's parse, in alternating order each round. Times are the thread's CPU time
// (CLOCK_THREAD_CPUTIME_ID), so time spent descheduled on a loaded machine does not count; the
// median and quartiles of the per-round ratios are printed. Both builds must produce the same bytes.
//   args: [rounds] [memory,disk | reader] [users|companies]
var rounds = args.Length > 0 ? int.Parse(args[0]) : 31;
var modes = args.Length > 1 ? args[1] : "memory";
var file = args.Length > 2 ? args[2] : "companies";
var lines = new List<byte[]>();
using (var gzip = new GZipStream(File.OpenRead(file.Contains('/') ? file : Path.Combine(Environment.GetEnvironmentVariable("JACKDAW_CORPUS") ?? "tests/corpus", file + ".jsonl.gz")), CompressionMode.Decompress))
using (var reader = new StreamReader(gzip))
{
    string? line;
    while (lines.Count < 2000 && (line = reader.ReadLine()) is not null) lines.Add(System.Text.Encoding.UTF8.GetBytes(line));
}
using var context = new JsonOperationContext();
using var oldContext = new OldContext();
long sink = 0;
// Same output check.
foreach (var l in lines.Take(200))
{
    var a = context.Parse(l, BlittableMode.Memory).ToArray(); var b = oldContext.Parse(l, OldMode.Memory).ToArray();
    if (!a.AsSpan().SequenceEqual(b)) { Console.WriteLine("OUTPUT DIFFERS (memory)"); break; }
    a = context.Parse(l, BlittableMode.Disk).ToArray(); b = oldContext.Parse(l, OldMode.Disk).ToArray();
    if (!a.AsSpan().SequenceEqual(b)) { Console.WriteLine("OUTPUT DIFFERS (disk)"); break; }
    context.Reset(); oldContext.Reset();
}
void Doc() { foreach (var l in lines) { using var d = JsonDocument.Parse(l); sink++; } }
void New(BlittableMode mode) { for (var i = 0; i < lines.Count; i++) { sink += context.Parse(lines[i], mode).Length; if ((i & 63) == 63) context.Reset(); } context.Reset(); }
void Old(OldMode mode) { for (var i = 0; i < lines.Count; i++) { sink += oldContext.Parse(lines[i], mode).Length; if ((i & 63) == 63) oldContext.Reset(); } oldContext.Reset(); }
double Time(Action a) { var t0 = ThreadCpu(); a(); return (ThreadCpu() - t0) / lines.Count; }
static double ThreadCpu() { clock_gettime(3, out var ts); return ts.Sec * 1e9 + ts.Nsec; }
[System.Runtime.InteropServices.DllImport("libc")] static extern int clock_gettime(int clock, out TimeSpec ts);
static string Q(List<double> r) { r.Sort(); return $"{r[r.Count / 2]:F3} ({r[r.Count / 4]:F3}-{r[3 * r.Count / 4]:F3})"; }
void Rd() { foreach (var l in lines) { var r = new Utf8JsonReader(l); while (r.Read()) sink++; } }
if (modes == "reader")
{
    for (var i = 0; i < 5; i++) { Doc(); Rd(); }
    List<double> rr = new();
    for (var r = 0; r < rounds; r++) { var d = Time(Doc); var x = Time(Rd); d = (d + Time(Doc)) / 2; rr.Add(x / d); }
    Console.WriteLine($"{file} reader/doc {Q(rr)}");
    return;
}
foreach (var m in modes.Split(','))
{
    var mode = m == "disk" ? BlittableMode.Disk : BlittableMode.Memory;
    var oldMode = m == "disk" ? OldMode.Disk : OldMode.Memory;
    for (var i = 0; i < 40; i++) { Doc(); New(mode); Old(oldMode); }
    List<double> rn = new(), ro = new(), rno = new();
    for (var r = 0; r < rounds; r++)
    {
        double d, o, n;
        if ((r & 1) == 0) { d = Time(Doc); o = Time(() => Old(oldMode)); n = Time(() => New(mode)); d = (d + Time(Doc)) / 2; }
        else { d = Time(Doc); n = Time(() => New(mode)); o = Time(() => Old(oldMode)); d = (d + Time(Doc)) / 2; }
        rn.Add(n / d); ro.Add(o / d); rno.Add(n / o);
    }
    Console.WriteLine($"{file} {m}: new/doc {Q(rn)}  base/doc {Q(ro)}  new/base {Q(rno)}");
}
GC.KeepAlive(sink);

struct TimeSpec { public long Sec; public long Nsec; }
