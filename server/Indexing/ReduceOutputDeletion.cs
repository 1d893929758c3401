using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Storage.Blittable;

namespace Jackdaw.Server.Indexing;

/// <summary>
/// Deletes the artificial documents (<c>@flags</c> with <c>Artificial</c>) a map-reduce index wrote
/// into its output and references collections, when the index is deleted or reset, in merged
/// transactions of at most <see cref="BatchSize"/> documents. Documents of those collections that
/// an index did not write are left alone.
/// </summary>
internal sealed class ReduceOutputDeletion(List<string> ids) : IMergedCommand<DatabaseTransaction>
{
    public const int BatchSize = 1024;

    public void Execute(DatabaseTransaction transaction)
    {
        foreach (var id in ids)
        {
            transaction.Delete(id, null);
        }
    }

    /// <summary>Deletes the output documents of <paramref name="index"/>'s definition (none for an index without an output collection).</summary>
    public static async Task RunAsync(DocumentDatabase database, Definitions.IndexDefinition definition)
    {
        var spec = definition.ReduceSpec;
        if (spec?.OutputReduceToCollection is null)
        {
            return;
        }
        foreach (var collection in new[] { spec.OutputReduceToCollection, spec.ReferencesCollection })
        {
            if (collection is null)
            {
                continue;
            }
            var after = 0L;
            while (true)
            {
                var ids = new List<string>();
                var read = 0;
                using (var reader = database.BeginRead())
                {
                    foreach (var record in reader.GetDocumentsFrom(collection.ToLowerInvariant(), after, BatchSize))
                    {
                        read++;
                        after = record.Etag;
                        if (IsArtificial(record.Document))
                        {
                            ids.Add(record.Id);
                        }
                    }
                }
                if (ids.Count > 0)
                {
                    await database.EnqueueAsync(new ReduceOutputDeletion(ids)).ConfigureAwait(false);
                }
                if (read < BatchSize)
                {
                    break;
                }
            }
        }
    }

    private static bool IsArtificial(ReadOnlySpan<byte> document)
    {
        var root = BlittableReader.Open(document);
        return root.TryGet("@metadata"u8, out var metadata) && metadata.Type == BlittableToken.Object
            && metadata.GetObject().TryGet("@flags"u8, out var flags) && flags.GetString() is { } text
            && text.Contains("Artificial", StringComparison.Ordinal);
    }
}
