using BenchmarkDotNet.Attributes;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>
/// Metadata stamping (what every stored document goes through): Modify with unchanged values copied
/// as whole blocks against the value-by-value rebuild (baseline), disk mode, per document.
/// </summary>
[MemoryDiagnoser]
public class BlittableModifyBenchmarks
{
    private const int Documents = 2000;
    private JsonOperationContext _sources = null!;
    private JsonOperationContext _context = null!;
    private BlittableDocument[] _documents = null!;
    private BlittablePatch _patch = null!;

    [Params("users", "companies", "orders")]
    public string Corpus { get; set; } = "orders";

    [GlobalSetup]
    public void Setup()
    {
        _sources = new JsonOperationContext();
        _context = new JsonOperationContext();
        _documents = BenchmarkCorpus.Load(Corpus, Documents).Select(line => _sources.Parse(line, BlittableMode.Disk)).ToArray();
        _patch = new BlittablePatch();
        _patch.Object("@metadata")
            .Set("@id", "orders/123456")
            .Set("@change-vector", "A:123456-Xb3f0Qm2Ck6Vd8Ae1Yt5Zw")
            .Set("@last-modified", "2026-11-23T10:00:00.0000000Z");
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _context.Dispose();
        _sources.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public int ValueByValue() => Stamp(allowBlockCopies: false);

    [Benchmark(OperationsPerInvoke = Documents)]
    public int BlockCopies() => Stamp(allowBlockCopies: true);

    private int Stamp(bool allowBlockCopies)
    {
        var total = 0;
        for (var i = 0; i < _documents.Length; i++)
        {
            total += _context.Modify(_documents[i].Span, _patch, BlittableMode.Disk, allowBlockCopies).Length;
            if ((i & 63) == 63)
            {
                _context.Reset();
            }
        }

        _context.Reset();
        return total;
    }
}
