using BenchmarkDotNet.Attributes;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>
/// JSON text → blittable (Memory and Disk mode) against JsonDocument.Parse (baseline), per document;
/// with Utf8JsonReader alone and a floor builder on it as yardsticks for the Memory-mode target.
/// </summary>
[MemoryDiagnoser]
public class BlittableParseBenchmarks
{
    private const int Documents = 2000;
    private byte[][] _lines = null!;
    private JsonOperationContext _context = null!;
    private readonly FloorBuilder _floor = new();

    [Params("users", "companies", "orders")]
    public string Corpus { get; set; } = "users";

    [GlobalSetup]
    public void Setup()
    {
        _lines = BenchmarkCorpus.Load(Corpus, Documents);
        _context = new JsonOperationContext();
    }

    [GlobalCleanup]
    public void Cleanup() => _context.Dispose();

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public int JsonDocumentParse()
    {
        var total = 0;
        foreach (var line in _lines)
        {
            using var doc = JsonDocument.Parse(line);
            total += doc.RootElement.ValueKind == JsonValueKind.Object ? 1 : 0;
        }

        return total;
    }

    /// <summary>Utf8JsonReader alone: what every builder fed by it pays before doing anything.</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int ReaderOnly()
    {
        var total = 0;
        foreach (var line in _lines)
        {
            var reader = new Utf8JsonReader(line);
            while (reader.Read())
            {
                total++;
            }
        }

        return total;
    }

    /// <summary>The reader plus the least per-token work of a binary document builder (see FloorBuilder).</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int FloorBuilderParse()
    {
        var total = 0;
        foreach (var line in _lines)
        {
            total += _floor.Build(line);
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public int BlittableMemory() => Parse(BlittableMode.Memory);

    [Benchmark(OperationsPerInvoke = Documents)]
    public int BlittableDisk() => Parse(BlittableMode.Disk);

    private int Parse(BlittableMode mode)
    {
        var total = 0;
        var lines = _lines;
        for (var i = 0; i < lines.Length; i++)
        {
            total += _context.Parse(lines[i], mode).Length;
            if ((i & 63) == 63)
            {
                _context.Reset();
            }
        }

        _context.Reset();
        return total;
    }
}
