using System.Buffers;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace Jackdaw.Client.Json;

/// <summary>
/// Serializes entities into one reused buffer, always with the same writer settings, so two
/// serializations of equal entities are equal bytes. Not thread-safe; one per session and purpose.
/// </summary>
internal sealed class EntityJsonBuffer(JsonSerializerOptions options) : IDisposable
{
    private readonly ArrayBufferWriter<byte> _buffer = new(1024);
    private Utf8JsonWriter? _writer;

    /// <summary>The entity's compact JSON, valid until the next call.</summary>
    public ReadOnlySpan<byte> Serialize(object entity, JsonTypeInfo typeInfo)
    {
        _buffer.ResetWrittenCount();
        if (_writer is null)
        {
            _writer = new Utf8JsonWriter(_buffer, new JsonWriterOptions { Encoder = options.Encoder, SkipValidation = true });
        }
        else
        {
            _writer.Reset(_buffer);
        }
        JsonSerializer.Serialize(_writer, entity, typeInfo);
        _writer.Flush();
        return _buffer.WrittenSpan;
    }

    public void Dispose() => _writer?.Dispose();
}
