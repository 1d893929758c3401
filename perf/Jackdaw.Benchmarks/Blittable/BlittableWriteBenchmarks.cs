using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using BenchmarkDotNet.Attributes;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Benchmarks.Blittable;

/// <summary>
/// Document → JSON text into a reused buffer: blittable (Disk-mode bytes as stored, and Memory mode)
/// against JsonDocument.WriteTo(Utf8JsonWriter) with default writer options (baseline), and with the
/// fastest options (relaxed escaping, no validation) for reference, per document.
/// </summary>
[MemoryDiagnoser]
public class BlittableWriteBenchmarks
{
    private const int Documents = 2000;
    private byte[][] _disk = null!;
    private byte[][] _memory = null!;
    private JsonDocument[] _documents = null!;
    private ArrayBufferWriter<byte> _output = null!;
    private Utf8JsonWriter _writer = null!;
    private Utf8JsonWriter _relaxedWriter = null!;

    [Params("users", "companies")]
    public string Corpus { get; set; } = "users";

    [GlobalSetup]
    public void Setup()
    {
        var lines = BenchmarkCorpus.Load(Corpus, Documents);
        using var context = new JsonOperationContext();
        _disk = lines.Select(l =>
        {
            var bytes = context.Parse(l, BlittableMode.Disk).ToArray();
            context.Reset();
            return bytes;
        }).ToArray();
        _memory = lines.Select(l =>
        {
            var bytes = context.Parse(l, BlittableMode.Memory).ToArray();
            context.Reset();
            return bytes;
        }).ToArray();
        _documents = lines.Select(l => JsonDocument.Parse(l)).ToArray();
        _output = new ArrayBufferWriter<byte>(1 << 20);
        _writer = new Utf8JsonWriter(_output);
        _relaxedWriter = new Utf8JsonWriter(_output, new JsonWriterOptions { Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping, SkipValidation = true });
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        foreach (var doc in _documents)
        {
            doc.Dispose();
        }

        _writer.Dispose();
        _relaxedWriter.Dispose();
    }

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public int JsonDocumentWriteTo() => WriteJsonDocuments(_writer);

    [Benchmark(OperationsPerInvoke = Documents)]
    public int JsonDocumentWriteToRelaxed() => WriteJsonDocuments(_relaxedWriter);

    private int WriteJsonDocuments(Utf8JsonWriter writer)
    {
        var total = 0;
        foreach (var doc in _documents)
        {
            _output.ResetWrittenCount();
            writer.Reset(_output);
            doc.WriteTo(writer);
            writer.Flush();
            total += _output.WrittenCount;
        }

        return total;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public int BlittableDiskWriteTo() => Write(_disk);

    [Benchmark(OperationsPerInvoke = Documents)]
    public int BlittableMemoryWriteTo() => Write(_memory);

    private int Write(byte[][] documents)
    {
        var total = 0;
        foreach (var doc in documents)
        {
            _output.ResetWrittenCount();
            BlittableJsonWriter.WriteTo(doc, _output);
            total += _output.WrittenCount;
        }

        return total;
    }
}
