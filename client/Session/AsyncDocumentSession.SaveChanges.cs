using System.Buffers;
using System.Net.Http.Headers;
using System.Text.Json;
using Jackdaw.Client.Attachments;
using Jackdaw.Client.Json;

namespace Jackdaw.Client.Session;

/// <summary>
/// The save: one <c>bulk_docs</c> request with every change, in RavenDB's order: deletes, puts
/// (with the forced revisions of the documents they write), the other forced
/// revisions, then the queued attachment commands. With attachments to store it is
/// RavenDB's multipart request: the commands' JSON as the first part, then each stored
/// attachment's bytes as a part of its own (<c>Command-Type: AttachmentStream</c>), in the order of
/// the AttachmentPUT commands, streamed from the caller's streams as the request is written.
/// </summary>
internal sealed partial class AsyncDocumentSession
{
    private static readonly MediaTypeHeaderValue JsonPartType = MediaTypeHeaderValue.Parse("application/json; charset=utf-8");

    public async Task SaveChangesAsync(CancellationToken token = default)
    {
        token.ThrowIfCancellationRequested();
        var body = new ArrayBufferWriter<byte>(4096);
        var sent = new List<SentCommand>();
        List<DeferredCommand>? attachmentPuts = null;
        using (var writer = new Utf8JsonWriter(body, WriterOptions))
        {
            writer.WriteStartObject();
            writer.WriteStartArray("Commands");
            foreach (var (id, changeVector) in _deletes)
            {
                writer.WriteStartObject();
                writer.WriteString("Type", "DELETE");
                writer.WriteString("Id", id);
                WriteChangeVector(writer, changeVector);
                writer.WriteEndObject();
                sent.Add(new SentCommand(SentKind.Delete, id, null, null, null));
            }

            var forcedByPut = new HashSet<string>(StringComparer.OrdinalIgnoreCase);
            foreach (var info in _byEntity.Values)
            {
                var current = Serialize(info);
                if (info.Metadata?.IsDirty != true && MatchesSnapshot(info, current))
                {
                    continue;
                }

                // A document the save changes gets its forced revision with its PUT, in the same
                // transaction: for a stored document the PUT carries RavenDB's
                // "ForceRevisionCreationStrategy":"Before" (the server keeps the version the session
                // changes, then writes the change); a new document has no version before, so a
                // ForceRevisionCreation command after its PUT keeps the new one (RavenDB's rule: a
                // new document's forced revision is "after").
                var expected = info.ExpectedChangeVector ?? (UseOptimisticConcurrency ? info.ChangeVector : null);
                var forced = info.Id is not null && _forceRevisions.TryGetValue(info.Id, out var strategy) && strategy != ForceRevisionStrategy.None;
                var forcedBefore = forced && info.ChangeVector is not null;
                if (forced)
                {
                    forcedByPut.Add(info.Id!);
                }

                writer.WriteStartObject();
                writer.WriteString("Type", "PUT");
                writer.WriteString("Id", info.Id ?? info.IdPrefix);
                writer.WritePropertyName("Document");
                _documentScratch ??= new ArrayBufferWriter<byte>(1024);
                DocumentJson.WriteDocument(writer, _documentScratch, current, info.Type, info.LoadedMetadata.Span, info.Metadata, _conventions.SerializerOptions);
                WriteChangeVector(writer, expected);
                if (forcedBefore)
                {
                    writer.WriteString("ForceRevisionCreationStrategy", "Before");
                }
                writer.WriteEndObject();
                sent.Add(new SentCommand(SentKind.Put, info.Id, info, current.ToArray(), null));
                if (forced && !forcedBefore)
                {
                    WriteForceRevision(writer, info.Id!, sent);
                }
            }

            foreach (var (id, strategy) in _forceRevisions)
            {
                if (strategy != ForceRevisionStrategy.None && !forcedByPut.Contains(id))
                {
                    WriteForceRevision(writer, id, sent);
                }
            }

            foreach (var command in _deferred)
            {
                command.Write(writer);
                sent.Add(new SentCommand(SentKind.Deferred, command.Id, null, null, command));
                if (command.Type == DeferredCommand.AttachmentPut)
                {
                    (attachmentPuts ??= []).Add(command);
                }
            }

            writer.WriteEndArray();
            writer.WriteEndObject();
        }

        if (sent.Count == 0)
        {
            return;
        }

        NumberOfRequests++;
        var path = _databasePath + "/bulk_docs" + SaveQuery;
        var response = attachmentPuts is null
            ? await _store.Executor.SendAsync(HttpMethod.Post, path, body.WrittenMemory, SaveServerWait, _sessionInfo, token).ConfigureAwait(false)
            : await _store.Executor.SendAsync(
                HttpMethod.Post, path, () => CreateMultipart(body.WrittenMemory, attachmentPuts), null, streamAnswer: false, SaveServerWait, _sessionInfo,
                () => attachmentPuts.TrueForAll(p => AttachmentStreamContent.CanSend(p.StreamStart, p.StreamStarted)), token).ConfigureAwait(false);
        using var json = await ReadJsonAsync(response, "bulk_docs", token).ConfigureAwait(false);
        if (!json.RootElement.TryGetProperty("Results", out var results) || results.ValueKind != JsonValueKind.Array || results.GetArrayLength() != sent.Count)
        {
            throw new JackdawException($"bulk_docs answered with {Describe(json.RootElement)} instead of one result per command ({sent.Count}).");
        }

        // The transaction is committed: from here on only the session's bookkeeping changes.
        var index = 0;
        foreach (var result in results.EnumerateArray())
        {
            var command = sent[index++];
            switch (command.Kind)
            {
                case SentKind.Delete:
                    _deletes.Remove(command.Id!);
                    _knownMissing.Add(command.Id!);
                    break;
                case SentKind.Put:
                    ApplyPutResult(command.Info!, command.Snapshot!, result);
                    break;
                case SentKind.ForceRevision:
                    ApplyForceRevisionResult(command.Id!, result);
                    break;
                case SentKind.Deferred:
                    ApplyAttachmentResult(command.Deferred!, result);
                    break;
            }
        }

        _forceRevisions.Clear();
        ClearDeferred();
    }

    /// <summary>RavenDB's command: <c>Id</c> and <c>Type</c>.</summary>
    private static void WriteForceRevision(Utf8JsonWriter writer, string id, List<SentCommand> sent)
    {
        writer.WriteStartObject();
        writer.WriteString("Id", id);
        writer.WriteString("Type", "ForceRevisionCreation");
        writer.WriteEndObject();
        sent.Add(new SentCommand(SentKind.ForceRevision, id, null, null, null));
    }

    /// <summary>The multipart body, made again for each attempt (the parts' streams rewind, or refuse a second reading).</summary>
    private static MultipartContent CreateMultipart(ReadOnlyMemory<byte> commands, List<DeferredCommand> attachmentPuts)
    {
        var multipart = new MultipartContent("mixed");
        var json = new ReadOnlyMemoryContent(commands);
        json.Headers.ContentType = JsonPartType;
        multipart.Add(json);
        foreach (var put in attachmentPuts)
        {
            multipart.Add(put.CreateStreamContent());
        }

        return multipart;
    }

    /// <summary>
    /// A forced revision made (<c>"RevisionCreated":true</c>) re-stored a document that had no
    /// revisions yet (its flags gained <c>HasRevisions</c>): a tracked one takes the new change vector.
    /// </summary>
    private void ApplyForceRevisionResult(string id, JsonElement result)
    {
        if (!result.TryGetProperty("RevisionCreated", out var created) || created.ValueKind != JsonValueKind.True)
        {
            return;
        }
        if (_byId.TryGetValue(id, out var info) && GetString(result, "@change-vector") is { } changeVector)
        {
            info.ChangeVector = changeVector;
            info.LastModified = GetString(result, "@last-modified") ?? info.LastModified;
            info.Metadata?.SetServerValue(MetadataKeys.ChangeVector, changeVector);
        }
    }

    private enum SentKind
    {
        Delete,
        Put,
        ForceRevision,
        Deferred,
    }

    /// <summary>What a command of the request was, to read its result.</summary>
    private readonly record struct SentCommand(SentKind Kind, string? Id, DocumentInfo? Info, byte[]? Snapshot, DeferredCommand? Deferred);
}
