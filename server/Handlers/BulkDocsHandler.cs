using Jackdaw.Server.Documents.Commands;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Wire;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Handlers;

/// <summary><c>POST /databases/*/bulk_docs</c>: many PUTs, PATCHes, DELETEs, ForceRevisionCreations and attachment commands in one transaction, all or none (multipart when it carries attachments).</summary>
public sealed class BulkDocsHandler(ServerContext server) : HandlerBase(server)
{
    [Route("/databases/*/bulk_docs", "POST")]
    [Access(RouteAccess.DatabaseReadWrite)]
    public async ValueTask Post(RequestContext context)
    {
        var database = Server.Databases.GetDatabase(context.GetCaptureMemory(0));
        var staged = new List<Documents.AttachmentSource>();
        List<BatchOperation> operations;
        if (BatchMultipart.IsMultipart(context.Request.ContentType))
        {
            // RavenDB's clients send a session's attachments with its batch as multipart: the
            // attachments stream to storage as they arrive, each held to Attachments:MaxSize.
            if (context.HttpContext.Features.Get<Microsoft.AspNetCore.Http.Features.IHttpMaxRequestBodySizeFeature>() is { IsReadOnly: false } limit)
            {
                limit.MaxRequestBodySize = null;
            }
            var maxCommands = Server.Options.Limits.BodyLimit(RequestBodyKind.Batch, Server.Options.MaxRequestBodySize).Bytes ?? long.MaxValue;
            operations = await BatchMultipart.ReadAsync(
                context.Request.ContentType!, context.Request.Body, database, context.Documents, maxCommands,
                Server.Options.Attachments.MaxSize, $"{AttachmentOptions.Section}:MaxSize", staged, context.RequestAborted).ConfigureAwait(false);
        }
        else
        {
            context.LimitBody(RequestBodyKind.Batch);
            var body = context.Request.BodyReader;
            var read = await DocumentBodies.BufferAsync(body, context.RequestAborted).ConfigureAwait(false);
            try
            {
                operations = BatchParser.ParseCommands(read.Buffer, context.Documents);
            }
            finally
            {
                body.AdvanceTo(read.Buffer.End);
            }
        }
        if (operations.Any(o => o.Attachment is { Kind: BatchAttachmentKind.Put, Source: null }))
        {
            throw new BadRequestException("The batch has AttachmentPUT commands but is not multipart: send the commands as the first part of a multipart body and each attachment's bytes as a part after it, in order.");
        }

        var wait = WaitForIndexes.Read(new UrlQuery(context.Request.QueryString.Value));
        var command = new BatchCommand(operations, context.Documents) { RecordChanges = wait is not null };
        if (operations.Count > 0)
        {
            try
            {
                await database.EnqueueAsync(command).ConfigureAwait(false);
            }
            catch
            {
                foreach (var source in staged)
                {
                    await Databases.AttachmentUpload.AbandonAsync(database, source).ConfigureAwait(false);
                }
                throw;
            }
        }

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

        // RavenDB's waitForReplicationAfterSaveChanges: the batch is saved here; answer once that
        // many other nodes hold it.
        var replicas = WaitForReplicas.Read(new UrlQuery(context.Request.QueryString.Value));
        IReadOnlyList<string>? replicatedTo = null;
        if (replicas is not null)
        {
            var etag = operations.Count > 0 && command.LastEtag > 0 ? command.LastEtag : database.LastEtag;
            // Asked of the nodes there are: with fewer other nodes than asked (or none known yet,
            // after a restart before the cluster's topology) the wait times out, as in RavenDB.
            var wanted = replicas.Majority ? Server.Replication.MajorityOf(database.Name) : replicas.Count;
            replicatedTo = await Server.Replication.WaitForReplicasAsync(database.Name, etag, wanted, replicas.Timeout, context.RequestAborted).ConfigureAwait(false);
            if (replicatedTo.Count < wanted && replicas.Throw)
            {
                throw new ReplicasNotCaughtUpException(
                    $"Could not verify that etag {etag} was replicated to {wanted} servers in {replicas.Timeout}. So far, it only replicated to {replicatedTo.Count}"
                    + (replicatedTo.Count > 0 ? $" ({string.Join(", ", replicatedTo)})." : "."));
            }
        }

        var json = context.StartJson();
        json.WriteStartObject();
        if (replicatedTo is not null)
        {
            // Not in RavenDB's answer (its clients ignore it): which nodes held the batch.
            json.WriteStartArray("ReplicatedTo");
            foreach (var tag in replicatedTo)
            {
                json.WriteStringValue(tag);
            }
            json.WriteEndArray();
        }
        json.WriteStartArray("Results");
        for (var i = 0; i < operations.Count; i++)
        {
            var result = command.Results[i];
            json.WriteStartObject();
            if (operations[i].Attachment is { } attachment)
            {
                WriteAttachmentResult(json, operations[i], attachment, result);
            }
            else if (result.Put is { } put)
            {
                // RavenDB's shape: only the stored metadata's keys, which its clients copy into
                // the entity's metadata as they are.
                json.WriteString("Type", "PUT");
                json.WriteString("@id", put.Id);
                if (operations[i].Put!.Collection is { } collection)
                {
                    json.WriteString("@collection", collection);
                }
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

    /// <summary>An attachment command's result, in RavenDB's shape for its type (the Node.js client reads <c>@id</c> for a delete).</summary>
    private static void WriteAttachmentResult(System.Text.Json.Utf8JsonWriter json, BatchOperation operation, BatchAttachment attachment, BatchOperationResult result)
    {
        switch (attachment.Kind)
        {
            case BatchAttachmentKind.Delete:
                json.WriteString("Type", "AttachmentDELETE");
                json.WriteString("@id", operation.Id);
                json.WriteString("Name", attachment.Name);
                break;
            case BatchAttachmentKind.Move:
                json.WriteString("Type", "AttachmentMOVE");
                json.WriteString("Id", operation.Id);
                json.WriteString("Name", attachment.Name);
                json.WriteString("DestinationId", result.Attachment!.Value.DocumentId);
                json.WriteString("DestinationName", result.Attachment!.Value.Name);
                break;
            default:
                json.WriteString("Type", attachment.Kind == BatchAttachmentKind.Put ? "AttachmentPUT" : "AttachmentCOPY");
                json.WriteString("Id", result.Attachment!.Value.DocumentId);
                json.WriteString("Name", result.Attachment!.Value.Name);
                break;
        }
        if (result.Attachment is { } stored)
        {
            json.WriteString("ChangeVector", stored.ChangeVector);
            json.WriteString("Hash", stored.Hash);
            json.WriteString("ContentType", stored.ContentType);
            json.WriteNumber("Size", stored.Size);
        }
        if (result.DocumentChangeVector is { } documentChangeVector)
        {
            json.WriteString("DocumentChangeVector", documentChangeVector);
        }
        if (result.DestinationDocumentChangeVector is { } destinationChangeVector)
        {
            json.WriteString("DestinationDocumentChangeVector", destinationChangeVector);
        }
    }

    /// <summary>Seven fraction digits and a Z, as stored in <c>@last-modified</c>: RavenDB's clients parse nothing less.</summary>
    private static string Timestamp(DateTime value) => value.ToString("yyyy-MM-dd'T'HH:mm:ss.fffffff'Z'", System.Globalization.CultureInfo.InvariantCulture);
}
