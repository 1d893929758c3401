using System.Buffers;
using System.Text.Encodings.Web;
using System.Text.Json;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Subscriptions;

namespace Jackdaw.Server.Http;

/// <summary>
/// A subscription batch as the worker receives it:
/// <c>{"Type":"Batch","Items":[{"Id","ChangeVector","Data":{document with @metadata}}],"Includes":{...},"LastEtag":n}</c>
/// (<c>Data</c> is the projection when the query selects).
/// </summary>
public static class SubscriptionBatchWriter
{
    public static ReadOnlyMemory<byte> Write(SubscriptionBatch batch, SubscriptionState state, DocumentsReader reader)
    {
        var output = new ArrayBufferWriter<byte>(64 * 1024);
        var query = state.Query;
        var includes = query.Include.Count == 0 ? null : query.Include.Select(p => p.Segments.Select(s => s.Name).ToArray()).ToList();
        var included = includes is null ? null : new HashSet<string>(StringComparer.OrdinalIgnoreCase);
        output.Write("{\"Type\":\"Batch\",\"Items\":["u8);
        var first = true;
        foreach (var item in batch.Items)
        {
            if (!first)
                output.Write(","u8);
            first = false;
            output.Write("{\"Id\":\""u8);
            output.Write(JsonEncodedText.Encode(item.Id, JavaScriptEncoder.UnsafeRelaxedJsonEscaping).EncodedUtf8Bytes);
            output.Write("\""u8);
            output.Write(",\"Etag\":"u8);
            output.Write(System.Text.Encoding.UTF8.GetBytes(item.Etag.ToString(System.Globalization.CultureInfo.InvariantCulture)));
            output.Write(",\"ChangeVector\":\""u8);
            output.Write(System.Text.Encoding.UTF8.GetBytes(ChangeVectors.Format(item.Etag, reader.DatabaseId)));
            output.Write("\",\"Data\":"u8);
            QueryRunner.WriteResult(output, query, item.Id, item.Document, null, null);
            output.Write("}"u8);
            if (included is not null)
                DocumentIncludes.Collect(item.Document, includes!, included);
        }
        output.Write("],\"Includes\":"u8);
        if (included is null)
            output.Write("{}"u8);
        else
            DocumentIncludes.Write(output, reader, included);
        output.Write(",\"LastEtag\":"u8);
        output.Write(System.Text.Encoding.UTF8.GetBytes(batch.LastEtag.ToString(System.Globalization.CultureInfo.InvariantCulture)));
        output.Write("}"u8);
        return output.WrittenMemory;
    }
}
