using BenchmarkDotNet.Attributes;
using System.Text.Json;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>
/// Reading 3 properties (FirstName, Age, Active) from each of the 18,801 users documents: blittable
/// (stored Disk-mode bytes, lookups with a hint) against JsonElement.TryGetProperty on parsed documents.
/// </summary>
[MemoryDiagnoser]
public class BlittableReadBenchmarks
{
    private const int Documents = 18_801;
    private byte[][] _blittables = null!;
    private JsonDocument[] _documents = null!;
    private BlittablePropertyName _firstName = new("FirstName");
    private BlittablePropertyName _age = new("Age");
    private BlittablePropertyName _active = new("Active");

    [GlobalSetup]
    public void Setup()
    {
        var lines = BenchmarkCorpus.Load("users", Documents);
        using var context = new JsonOperationContext();
        _blittables = lines.Select(l =>
        {
            var bytes = context.Parse(l, BlittableMode.Disk).ToArray();
            context.Reset();
            return bytes;
        }).ToArray();
        _documents = lines.Select(l => JsonDocument.Parse(l)).ToArray();
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        foreach (var doc in _documents)
        {
            doc.Dispose();
        }
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public long JsonElementTryGetProperty()
    {
        long total = 0;
        foreach (var doc in _documents)
        {
            var root = doc.RootElement;
            if (root.TryGetProperty("FirstName"u8, out var name) && name.ValueKind == JsonValueKind.String)
            {
                total++;
            }

            if (root.TryGetProperty("Age"u8, out var age))
            {
                total += age.GetInt64();
            }

            if (root.TryGetProperty("Active"u8, out var active) && active.GetBoolean())
            {
                total++;
            }
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public long BlittableTryGetWithHint()
    {
        long total = 0;
        foreach (var bytes in _blittables)
        {
            var root = BlittableReader.Open(bytes);
            if (root.TryGet(ref _firstName, out var name) && name.Type == BlittableToken.String)
            {
                total++;
            }

            if (root.TryGet(ref _age, out var age) && age.TryGetInt64(out var years))
            {
                total += years;
            }

            if (root.TryGet(ref _active, out var active) && active.GetBoolean())
            {
                total++;
            }
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public long BlittableTryGetNoHint()
    {
        long total = 0;
        foreach (var bytes in _blittables)
        {
            var root = BlittableReader.Open(bytes);
            if (root.TryGet("FirstName"u8, out var name) && name.Type == BlittableToken.String)
            {
                total++;
            }

            if (root.TryGet("Age"u8, out var age) && age.TryGetInt64(out var years))
            {
                total += years;
            }

            if (root.TryGet("Active"u8, out var active) && active.GetBoolean())
            {
                total++;
            }
        }

        return total;
    }
}
