using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>POST /databases/*/bulk_docs</c>: many PUTs, PATCHes, DELETEs and ForceRevisionCreations in one transaction, all or none.</summary>
public sealed class BulkDocsHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/bulk_docs", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Post(RequestContext context)
    {
        context.LimitBody(RequestBodyKind.Batch);
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        // RavenDB's clients send attachments with a batch as multipart/form-data.
        if (context.Request.ContentType is { } contentType && contentType.StartsWith("multipart/", StringComparison.OrdinalIgnoreCase))
            throw new FeatureNotSupportedException("Attachments are not supported yet: bulk_docs takes a JSON body {\"Commands\":[...]}, not multipart/form-data.");
        var body = context.Request.BodyReader;
        var read = await DocumentBodies.BufferAsync(body, context.RequestAborted).ConfigureAwait(false);
        List<BatchOperation> operations;
        try
        {
            operations = BatchParser.ParseCommands(read.Buffer, context.Documents);
        }
        finally
        {
            body.AdvanceTo(read.Buffer.End);
        }

        var wait = WaitForIndexes.Read(new UrlQuery(context.Request.QueryString.Value));
        var command = new BatchCommand(operations, context.Documents) { RecordChanges = wait is not null };
        if (operations.Count > 0)
            await database.EnqueueAsync(command).ConfigureAwait(false);

        // RavenDB's waitForIndexesAfterSaveChanges: the batch is saved; answer once its indexes have it.
        if (wait is not null && operations.Count > 0)
        {
            var lagging = await IndexStore.Of(database).WaitForIndexesAsync(command.LastEtag, wait.Indexes, command.Collections, wait.Timeout, context.RequestAborted).ConfigureAwait(false);
            if (lagging.Count > 0 && wait.Throw)
            {
                throw new IndexesNotCaughtUpException(
                    $"The batch was saved (up to etag {command.LastEtag}), but after waiting {wait.Timeout} {lagging.Count} index(es) had not indexed it: "
                    + string.Join("; ", lagging.Select(l => $"'{l.Name}': {l.Why}")) + ".");
            }
        }

        var json = context.StartJson();
        json.WriteStartObject();
        json.WriteStartArray("Results");
        for (var i = 0; i < operations.Count; i++)
        {
            var result = command.Results[i];
            json.WriteStartObject();
            if (result.Put is { } put)
            {
                // RavenDB's shape: only the stored metadata's keys, which its clients copy into
                // the entity's metadata as they are.
                json.WriteString("Type", "PUT");
                json.WriteString("@id", put.Id);
                if (operations[i].Put!.Collection is { } collection)
                    json.WriteString("@collection", collection);
                json.WriteString("@change-vector", put.ChangeVector);
                json.WriteString("@last-modified", Timestamp(put.LastModified));
            }
            else if (result.Patch is { } patch)
            {
                json.WriteString("Type", "PATCH");
                json.WriteString("Id", patch.Put?.Id ?? operations[i].Id);
                if (patch.Put is { } patched)
                {
                    json.WriteString("ChangeVector", patched.ChangeVector);
                    json.WriteString("LastModified", Timestamp(patched.LastModified));
                }
                json.WriteString("PatchStatus", patch.Status);
                if (patch.ModifiedDocument is { } modified)
                {
                    json.WritePropertyName("ModifiedDocument");
                    json.WriteRawValue(modified, skipInputValidation: true);
                }
            }
            else if (result.ForcedRevision is { } forced)
            {
                // RavenDB's shape: the document's metadata after it (a first revision re-stores it with HasRevisions).
                json.WriteString("Type", "ForceRevisionCreation");
                json.WriteString("@id", forced.Id);
                json.WriteString("@change-vector", forced.ChangeVector);
                json.WriteString("@last-modified", Timestamp(forced.LastModified));
                json.WriteBoolean("RevisionCreated", forced.RevisionCreated);
            }
            else
            {
                json.WriteString("Type", "DELETE");
                json.WriteString("Id", operations[i].Id);
                json.WriteBoolean("Deleted", result.Deleted);
            }
            json.WriteEndObject();
        }
        json.WriteEndArray();
        json.WriteEndObject();
        await context.CompleteJsonAsync().ConfigureAwait(false);
    }

    /// <summary>Seven fraction digits and a Z, as stored in <c>@last-modified</c>: RavenDB's clients parse nothing less.</summary>
    private static string Timestamp(DateTime value) => value.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", System.Globalization.CultureInfo.InvariantCulture);
}
