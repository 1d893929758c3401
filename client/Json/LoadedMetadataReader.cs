using System.Text.Json;

namespace Jackdaw.Client.Json;

/// <summary>What a session takes from a loaded document's <c>@metadata</c>, and where it lies in the document.</summary>
/// <remarks><see cref="IsProjection"/>: the server marked the value <c>"@projection":true</c> (a query's projected result).</remarks>
internal readonly record struct LoadedMetadata(int Offset, int Length, string? Id, string? ChangeVector, string? LastModified, bool IsRequestedType, string? ClrTypeName, bool IsProjection);

/// <summary>Finds and reads the top-level <c>@metadata</c> object of one loaded document.</summary>
internal static class LoadedMetadataReader
{
    /// <summary>
    /// Reads the <c>@metadata</c> object of <paramref name="document"/> (a complete, valid JSON
    /// object). The server writes it last, so it is looked for from the end first and taken if
    /// its object closes right before the document's own <c>}</c>: only a top-level property
    /// does (a nested one leaves at least its parent's <c>}</c> between). Otherwise the
    /// document's top-level properties are walked. <paramref name="requestedId"/> is returned
    /// instead of an equal <c>@id</c> string, and a <c>Jackdaw-Clr-Type</c> equal to
    /// <paramref name="requestedClrTypeName"/> is reported without decoding it.
    /// </summary>
    public static bool TryRead(ReadOnlySpan<byte> document, string requestedId, ReadOnlySpan<byte> requestedClrTypeName, out LoadedMetadata metadata)
    {
        var name = "\"@metadata\":{"u8;
        var candidate = document.LastIndexOf(name);
        if (candidate > 0 && document[candidate - 1] is (byte)',' or (byte)'{')
        {
            var offset = candidate + name.Length - 1;
            var reader = new Utf8JsonReader(document[offset..]);
            reader.Read();
            metadata = ReadObject(ref reader, offset, requestedId, requestedClrTypeName);
            if (offset + metadata.Length == document.Length - 1)
            {
                return true;
            }
        }

        var walker = new Utf8JsonReader(document);
        walker.Read();
        var found = false;
        metadata = default;
        while (walker.Read() && walker.TokenType == JsonTokenType.PropertyName)
        {
            var isMetadata = walker.ValueTextEquals("@metadata"u8);
            walker.Read();
            if (isMetadata && walker.TokenType == JsonTokenType.StartObject)
            {
                metadata = ReadObject(ref walker, (int)walker.TokenStartIndex, requestedId, requestedClrTypeName);
                found = true;
            }
            else
            {
                walker.Skip();
            }
        }

        return found;
    }

    /// <summary>Reads the object whose <c>{</c> the reader is on, at <paramref name="offset"/> in the document; the reader ends on its <c>}</c>.</summary>
    private static LoadedMetadata ReadObject(ref Utf8JsonReader reader, int offset, string requestedId, ReadOnlySpan<byte> requestedClrTypeName)
    {
        var start = (int)reader.TokenStartIndex;
        string? id = null, changeVector = null, lastModified = null, clrTypeName = null;
        bool isRequestedType = false, isProjection = false;
        while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
        {
            var key = reader.ValueTextEquals("@id"u8) ? 1
                : reader.ValueTextEquals("@change-vector"u8) ? 2
                : reader.ValueTextEquals("@last-modified"u8) ? 3
                : reader.ValueTextEquals("Jackdaw-Clr-Type"u8) ? 4
                : reader.ValueTextEquals("@projection"u8) ? 5
                : 0;
            reader.Read();
            if (key == 5)
            {
                isProjection = reader.TokenType == JsonTokenType.True;
                reader.Skip();
                continue;
            }

            if (reader.TokenType != JsonTokenType.String)
            {
                reader.Skip();
                continue;
            }

            switch (key)
            {
                case 1:
                    id = reader.ValueTextEquals(requestedId) ? requestedId : reader.GetString();
                    break;
                case 2:
                    changeVector = reader.GetString();
                    break;
                case 3:
                    lastModified = reader.GetString();
                    break;
                case 4:
                    // The usual case, the requested type itself, needs neither a string nor a type lookup.
                    isRequestedType = reader.ValueTextEquals(requestedClrTypeName);
                    clrTypeName = isRequestedType ? null : reader.GetString();
                    break;
            }
        }

        return new LoadedMetadata(offset, (int)reader.BytesConsumed - start, id, changeVector, lastModified, isRequestedType, clrTypeName, isProjection);
    }
}
