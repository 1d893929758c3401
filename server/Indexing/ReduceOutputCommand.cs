using System.Buffers;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Writes the results of a map-reduce index's changed keys into its <c>OutputReduceToCollection</c>
/// (RavenDB's artificial documents), in one merged transaction: each result row a document
/// <c>{Collection}/{hash of the key}</c> (<c>-1</c>, <c>-2</c>... for a key's further rows) with
/// <c>@flags: "Artificial, FromIndex"</c>; rows a key no longer has are deleted. With a
/// <c>PatternForOutputReduceToCollectionReferences</c> (<c>reports/orders/{Company}</c>), the
/// reference document at the id the pattern gives from the row lists the output ids under it
/// (<c>ReduceOutputs</c>), in <c>{Collection}/References</c> unless named; a key whose reference
/// id changes leaves the old one (deleted when empty).
/// </summary>
internal sealed class ReduceOutputCommand(string collection, string? pattern, string? referencesCollection, List<ReduceOutputCommand.KeyOutput> keys) : IMergedCommand<DatabaseTransaction>
{
    /// <summary>One key: its hash, its result rows (JSON objects), how many rows it had before, and the reference id it was under.</summary>
    public sealed record KeyOutput(ulong Hash, List<byte[]> Rows, int PreviousRows, string? PreviousReference)
    {
        /// <summary>The reference id it is under now (set by the command).</summary>
        public string? Reference { get; set; }
    }

    /// <summary>Rows whose pattern gives no valid id (a field missing or empty, or an id the database would refuse or complete): no reference document for them.</summary>
    public List<string> Unreferenced { get; } = new();

    public void Execute(DatabaseTransaction transaction)
    {
        using var context = new JsonOperationContext();
        foreach (var key in keys)
        {
            var first = OutputId(key.Hash, 0);
            for (var row = 0; row < key.Rows.Count; row++)
            {
                Put(transaction, context, OutputId(key.Hash, row), key.Rows[row], collection, "Artificial, FromIndex");
            }
            for (var row = key.Rows.Count; row < key.PreviousRows; row++)
            {
                transaction.Delete(OutputId(key.Hash, row), null);
            }
            if (pattern is null)
            {
                continue;
            }
            key.Reference = key.Rows.Count == 0 ? null : ReferenceId(key.Rows[0]);
            if (key.Rows.Count > 0 && key.Reference is null)
            {
                Unreferenced.Add(first);
            }
            if (key.PreviousReference is not null && !string.Equals(key.PreviousReference, key.Reference, StringComparison.OrdinalIgnoreCase))
            {
                UpdateReference(transaction, context, key.PreviousReference, first, add: false);
            }
            if (key.Reference is not null)
            {
                UpdateReference(transaction, context, key.Reference, first, add: true);
            }
        }
    }

    private string OutputId(ulong hash, int row) => row == 0 ? $"{collection}/{hash}" : $"{collection}/{hash}-{row}";

    // The pattern with each {Field} replaced by the row's value of that field; null when one is missing.
    private string? ReferenceId(byte[] row)
    {
        using var document = JsonDocument.Parse(row);
        var builder = new StringBuilder();
        var at = 0;
        while (at < pattern!.Length)
        {
            var open = pattern.IndexOf('{', at);
            if (open < 0)
            {
                builder.Append(pattern, at, pattern.Length - at);
                break;
            }
            var close = pattern.IndexOf('}', open);
            if (close < 0)
            {
                return null;
            }
            builder.Append(pattern, at, open - at);
            var field = pattern[(open + 1)..close];
            if (!document.RootElement.TryGetProperty(field, out var value) || value.ValueKind is JsonValueKind.Null or JsonValueKind.Undefined)
            {
                return null;
            }
            var text = value.ValueKind == JsonValueKind.String ? value.GetString() : value.GetRawText();
            if (string.IsNullOrEmpty(text))
            {
                return null;
            }
            builder.Append(text);
            at = close + 1;
        }
        // Only an id as it is: one the database would complete ('/' or '|' at its end) or refuse
        // (too long, a control character) names no reference document.
        var id = builder.ToString();
        return DocumentIds.Validate(id) is null && DocumentIds.KindOf(id) == DocumentIds.IdKind.Exact ? id : null;
    }

    private void UpdateReference(DatabaseTransaction transaction, JsonOperationContext context, string referenceId, string outputId, bool add)
    {
        var outputs = new List<string>();
        if (transaction.TryGet(referenceId, out var record))
        {
            var json = new ArrayBufferWriter<byte>();
            BlittableJsonWriter.WriteTo(record.Document, json);
            using var existing = JsonDocument.Parse(json.WrittenMemory);
            if (existing.RootElement.TryGetProperty("ReduceOutputs", out var list) && list.ValueKind == JsonValueKind.Array)
            {
                outputs.AddRange(list.EnumerateArray().Where(v => v.ValueKind == JsonValueKind.String).Select(v => v.GetString()!));
            }
        }
        var had = outputs.Contains(outputId, StringComparer.OrdinalIgnoreCase);
        if (add == had)
        {
            return;
        }
        if (add)
        {
            outputs.Add(outputId);
        }
        else
        {
            outputs.RemoveAll(o => string.Equals(o, outputId, StringComparison.OrdinalIgnoreCase));
        }
        if (outputs.Count == 0)
        {
            transaction.Delete(referenceId, null);
            return;
        }
        var body = new JsonObject { ["ReduceOutputs"] = new JsonArray(outputs.Select(o => (JsonNode?)JsonValue.Create(o)).ToArray()) };
        Put(transaction, context, referenceId, JsonSerializer.SerializeToUtf8Bytes(body), referencesCollection!, "Artificial, FromIndex");
    }

    private static void Put(DatabaseTransaction transaction, JsonOperationContext context, string id, byte[] row, string collection, string flags)
    {
        var json = JsonNode.Parse(row) as JsonObject ?? new JsonObject();
        json.Remove("@metadata");
        json["@metadata"] = new JsonObject { ["@collection"] = collection, ["@flags"] = flags };
        var document = context.Parse(JsonSerializer.SerializeToUtf8Bytes(json), BlittableMode.Disk);
        transaction.Put(id, document.Span, collection, null, context);
    }
}
