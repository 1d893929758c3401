using System.Buffers;
using System.Text.Json;
using Jackdaw.Server.Documents.Commands;
using Jackdaw.Storage.Blittable;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Wire;

/// <summary>
/// Reads the commands of a <c>bulk_docs</c> body, <c>{"Commands":[{"Type":"PUT","Id":…,"Document":{…},"ChangeVector":…}, {"Type":"DELETE",…}]}</c>,
/// and the lines of a <c>bulk_insert</c> stream, <c>{"Id":…,"Document":{…}}</c>. The envelope is
/// tokenized with <see cref="Utf8JsonReader"/>; each <c>Document</c> is parsed straight from its
/// slice of the body into a disk-mode blittable, never through a string or <see cref="JsonDocument"/>.
/// </summary>
public static class BatchParser
{
    private static readonly JsonReaderOptions ReaderOptions = new() { MaxDepth = 512 };

    public static List<BatchOperation> ParseCommands(ReadOnlySequence<byte> body, JsonOperationContext context)
    {
        if (body.IsEmpty)
        {
            throw new BadRequestException("The request body is empty; send {\"Commands\":[...]}.");
        }
        var reader = new Utf8JsonReader(body, ReaderOptions);
        Read(ref reader);
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new BadRequestException("The body must be a JSON object: {\"Commands\":[...]}.");
        }

        List<BatchOperation>? operations = null;
        while (Read(ref reader) && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Commands"u8))
            {
                Read(ref reader);
                if (reader.TokenType != JsonTokenType.StartArray)
                {
                    throw new BadRequestException("'Commands' must be an array.");
                }
                operations = [];
                while (Read(ref reader) && reader.TokenType != JsonTokenType.EndArray)
                {
                    operations.Add(ParseCommand(ref reader, body, context, operations.Count));
                }
            }
            else if (reader.ValueTextEquals("TransactionMode"u8))
            {
                // RavenDB's cluster-wide transactions rely on atomic guards the server must keep:
                // running one as an ordinary batch would lose updates silently.
                var mode = ReadString(ref reader, "The batch", "TransactionMode");
                if (mode is not (null or "SingleNode"))
                {
                    throw new FeatureNotSupportedException($"TransactionMode '{mode}' is not supported: Jackdaw is a single node and runs every batch as one ACID transaction (TransactionMode SingleNode).");
                }
            }
            else
            {
                Read(ref reader);
                reader.Skip();
            }
        }
        if (Read(ref reader))
        {
            throw new BadRequestException($"Unexpected data after the end of the body at byte {reader.TokenStartIndex}.");
        }
        if (operations is null)
        {
            throw new BadRequestException("The body has no 'Commands' array.");
        }
        return operations;
    }

    /// <summary>Lines up to this size that straddle buffer segments are copied to one span first.</summary>
    private const int LineCopyLimit = 1024 * 1024;

    /// <summary>
    /// Parses one <c>bulk_insert</c> command, <c>{"Id":…,"Document":{…}}</c> (an NDJSON line, or an
    /// element of RavenDB's array, which also names its <c>"Type"</c>); null for RavenDB's
    /// <c>{"Type":"HeartBeat"}</c>, which carries nothing.
    /// </summary>
    public static DocumentToPut? ParseInsertLine(ReadOnlySequence<byte> line, JsonOperationContext context, long lineNumber)
    {
        if (line.IsSingleSegment)
        {
            return ParseInsertLine(line.FirstSpan, line, context, lineNumber);
        }
        if (line.Length > LineCopyLimit)
        {
            return ParseInsertLine(default, line, context, lineNumber);
        }

        var copy = ArrayPool<byte>.Shared.Rent((int)line.Length);
        try
        {
            line.CopyTo(copy);
            // The document is built into the context: nothing refers to the copy afterwards.
            return ParseInsertLine(copy.AsSpan(0, (int)line.Length), new ReadOnlySequence<byte>(copy, 0, (int)line.Length), context, lineNumber);
        }
        finally
        {
            ArrayPool<byte>.Shared.Return(copy);
        }
    }

    /// <param name="span">The line as one span when it is held in one (empty otherwise): then the
    /// document, usually the last property, is parsed in the same pass that finds its end.</param>
    /// <remarks>
    /// A line is either the envelope <c>{"Id":…,"Document":{…}}</c> (RavenDB's stream adds
    /// <c>"Type":"PUT"</c>; other properties are ignored) or, as RavenDB's exports and our corpus
    /// hold them, the document itself carrying its id in <c>@metadata.@id</c>: a top-level
    /// <c>@metadata</c> is what tells them apart, since an envelope's metadata is inside its
    /// document. The envelope is read first (the client's stream, the hot path, pays nothing); a
    /// document is known when the reader meets its <c>@metadata</c>, or when the line fails as an
    /// envelope (a document's own <c>Id</c>, <c>Type</c> or <c>Document</c> property) and has one.
    /// </remarks>
    private static DocumentToPut? ParseInsertLine(ReadOnlySpan<byte> span, ReadOnlySequence<byte> line, JsonOperationContext context, long lineNumber)
    {
        try
        {
            return ParseEnvelope(span, line, context, lineNumber);
        }
        catch (BadRequestException) when (HasTopLevelMetadata(line))
        {
            return ParseDocumentLine(line, context, lineNumber);
        }
    }

    private static DocumentToPut? ParseEnvelope(ReadOnlySpan<byte> span, ReadOnlySequence<byte> line, JsonOperationContext context, long lineNumber)
    {
        var reader = span.IsEmpty ? new Utf8JsonReader(line, ReaderOptions) : new Utf8JsonReader(span, ReaderOptions);
        Read(ref reader);
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new BadRequestException($"Line {lineNumber} is not a JSON object: send {{\"Id\":...,\"Document\":{{...}}}} or a document with its id in @metadata.@id.");
        }
        string? id = null;
        BlittableDocument? document = null;
        while (Read(ref reader) && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Id"u8))
            {
                Read(ref reader);
                id = reader.TokenType == JsonTokenType.String ? GetString(ref reader, $"Line {lineNumber}", "Id") : throw new BadRequestException($"Line {lineNumber}: 'Id' must be a string.");
            }
            else if (reader.ValueTextEquals("Type"u8))
            {
                // RavenDB's stream names each command; a heartbeat keeps the connection open.
                var type = ReadString(ref reader, $"Line {lineNumber}", "Type");
                if (type == "HeartBeat")
                {
                    return null;
                }
                if (type is not (null or "PUT"))
                {
                    throw new BadRequestException($"Line {lineNumber}: bulk insert supports PUT commands (and heartbeats), not '{type}'.");
                }
            }
            else if (reader.ValueTextEquals("Document"u8))
            {
                document = ParseDocument(ref reader, line, span, context, $"Line {lineNumber}", out var closesEnvelope);
                if (closesEnvelope)
                {
                    return new DocumentToPut(Validate(id, $"Line {lineNumber}"), document.Value, DocumentBodies.GetCollection(document.Value), null);
                }
            }
            else if (reader.ValueTextEquals("@metadata"u8))
            {
                return ParseDocumentLine(line, context, lineNumber);
            }
            else
            {
                Read(ref reader);
                reader.Skip();
            }
        }
        if (Read(ref reader))
        {
            throw new BadRequestException($"Line {lineNumber}: unexpected data after the object.");
        }
        if (document is not { } doc)
        {
            throw new BadRequestException($"Line {lineNumber} has no 'Document' object: send {{\"Id\":...,\"Document\":{{...}}}} or a document with its id in @metadata.@id.");
        }
        id = Validate(id, $"Line {lineNumber}");
        return new DocumentToPut(id, doc, DocumentBodies.GetCollection(doc), null);
    }

    /// <summary>Cold path: whether the line is a JSON object with a top-level <c>@metadata</c> property.</summary>
    private static bool HasTopLevelMetadata(ReadOnlySequence<byte> line)
    {
        var reader = new Utf8JsonReader(line, ReaderOptions);
        try
        {
            if (!reader.Read() || reader.TokenType != JsonTokenType.StartObject)
            {
                return false;
            }
            while (reader.Read() && reader.TokenType == JsonTokenType.PropertyName)
            {
                if (reader.ValueTextEquals("@metadata"u8))
                {
                    return true;
                }
                reader.Read();
                reader.Skip();
            }
        }
        catch (JsonException)
        {
        }
        return false;
    }

    /// <summary>A line that is the document itself, its id in <c>@metadata.@id</c> (RavenDB's export shape).</summary>
    private static DocumentToPut ParseDocumentLine(ReadOnlySequence<byte> line, JsonOperationContext context, long lineNumber)
    {
        BlittableDocument document;
        try
        {
            document = context.Parse(line, BlittableMode.Disk);
        }
        catch (BlittableParseException e)
        {
            throw new BadRequestException($"Line {lineNumber} is not valid JSON: {JsonSyntaxErrors.Located(e.Description, lineNumber, e.Column)}", e);
        }
        var id = DocumentBodies.GetMetadataId(document)
            ?? throw new BadRequestException($"Line {lineNumber} has a top-level @metadata but no '@metadata.@id': a line that is a document carries its id there (or send {{\"Id\":...,\"Document\":{{...}}}}).");
        return new DocumentToPut(Validate(id, $"Line {lineNumber}"), document, DocumentBodies.GetCollection(document), null);
    }

    /// <summary>Whether <paramref name="rest"/> is just the envelope's closing brace, with optional whitespace.</summary>
    private static bool ClosesEnvelope(ReadOnlySpan<byte> rest)
    {
        rest = rest.Trim(" \t\r\n"u8);
        return rest.Length == 1 && rest[0] == (byte)'}';
    }

    private static BatchOperation ParseCommand(ref Utf8JsonReader reader, ReadOnlySequence<byte> body, JsonOperationContext context, int index)
    {
        var where = $"Command {index}";
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new BadRequestException($"{where} must be a JSON object.");
        }
        string? type = null, id = null, changeVector = null;
        var idIsNull = false;
        BlittableDocument? document = null;
        System.Text.Json.Nodes.JsonObject? patch = null;
        var returnDocument = false;
        var forceRevisionBefore = false;
        string? name = null, contentType = null, destinationId = null, destinationName = null;
        while (Read(ref reader) && reader.TokenType == JsonTokenType.PropertyName)
        {
            if (reader.ValueTextEquals("Type"u8))
            {
                type = ReadString(ref reader, where, "Type");
            }
            else if (reader.ValueTextEquals("Id"u8))
            {
                id = ReadString(ref reader, where, "Id");
                idIsNull = id is null;
            }
            else if (reader.ValueTextEquals("ChangeVector"u8))
            {
                changeVector = ReadString(ref reader, where, "ChangeVector");
            }
            else if (reader.ValueTextEquals("Document"u8))
            {
                document = ParseDocument(ref reader, body, context, where);
            }
            else if (reader.ValueTextEquals("Patch"u8) || reader.ValueTextEquals("PatchIfMissing"u8) || reader.ValueTextEquals("CreateIfMissing"u8))
            {
                var patchProperty = reader.GetString()!;
                Read(ref reader);
                patch ??= [];
                patch[patchProperty] = System.Text.Json.Nodes.JsonNode.Parse(ref reader);
            }
            else if (reader.ValueTextEquals("Name"u8))
            {
                name = ReadString(ref reader, where, "Name");
            }
            else if (reader.ValueTextEquals("ContentType"u8))
            {
                contentType = ReadString(ref reader, where, "ContentType");
            }
            else if (reader.ValueTextEquals("DestinationId"u8))
            {
                destinationId = ReadString(ref reader, where, "DestinationId");
            }
            else if (reader.ValueTextEquals("DestinationName"u8))
            {
                destinationName = ReadString(ref reader, where, "DestinationName");
            }
            else if (reader.ValueTextEquals("ForceRevisionCreationStrategy"u8))
            {
                forceRevisionBefore = ReadForceRevisionStrategy(ref reader, where);
            }
            else if (reader.ValueTextEquals("ReturnDocument"u8))
            {
                Read(ref reader);
                returnDocument = reader.TokenType == JsonTokenType.True;
            }
            else
            {
                Read(ref reader);
                reader.Skip();
            }
        }

        // "Id": null on a PUT asks the server for an id, as RavenDB's clients send for a document
        // they cannot name (an object literal of no collection): a new GUID, as RavenDB gives.
        if (idIsNull && type == "PUT")
        {
            id = Guid.NewGuid().ToString();
        }
        id = Validate(id, where);
        switch (type)
        {
            case "PUT":
                if (document is not { } doc)
                {
                    throw new BadRequestException($"{where} (PUT '{id}') has no 'Document' object.");
                }
                return new BatchOperation(id, new DocumentToPut(id, doc, DocumentBodies.GetCollection(doc), changeVector), changeVector) { ForceRevisionBefore = forceRevisionBefore };
            case "DELETE":
                return new BatchOperation(id, null, changeVector);
            case "PATCH":
                return new BatchOperation(id, null, changeVector, PatchRequestReader.Read(JsonDocument.Parse((patch ?? []).ToJsonString()).RootElement, $"{where} (PATCH '{id}')"), returnDocument);
            case "AttachmentPUT" or "AttachmentDELETE" or "AttachmentMOVE" or "AttachmentCOPY":
                return new BatchOperation(id, null, changeVector, Attachment: ParseAttachment(type, where, id, name, contentType, destinationId, destinationName));
            case "ForceRevisionCreation":
                return new BatchOperation(id, null, changeVector) { ForceRevision = true };
            case null:
                throw new BadRequestException($"{where} has no 'Type'; use \"PUT\", \"DELETE\", \"PATCH\", \"ForceRevisionCreation\" or an attachment's (\"AttachmentPUT\", ...).");
            default:
                throw new BadRequestException($"{where} has an unknown Type '{type}'; use \"PUT\", \"DELETE\", \"PATCH\", \"ForceRevisionCreation\", \"AttachmentPUT\", \"AttachmentDELETE\", \"AttachmentMOVE\" or \"AttachmentCOPY\".");
        }
    }

    /// <summary>
    /// A PUT's <c>ForceRevisionCreationStrategy</c>, as RavenDB's clients send it for a document the
    /// session forces a revision of and also changes: <c>"Before"</c> (true) or <c>"None"</c>.
    /// </summary>
    private static bool ReadForceRevisionStrategy(ref Utf8JsonReader reader, string where) =>
        ReadString(ref reader, where, "ForceRevisionCreationStrategy") switch
        {
            null => false,
            var strategy when strategy.Equals("None", StringComparison.OrdinalIgnoreCase) => false,
            var strategy when strategy.Equals("Before", StringComparison.OrdinalIgnoreCase) => true,
            var strategy => throw new BadRequestException($"{where} has ForceRevisionCreationStrategy '{strategy}'; use \"Before\" (store the stored version as a revision before this PUT) or \"None\"."),
        };

    private static BatchAttachment ParseAttachment(string type, string where, string id, string? name, string? contentType, string? destinationId, string? destinationName)
    {
        if (Documents.AttachmentNames.Validate(name) is { } problem)
        {
            throw new BadRequestException($"{where} ({type} '{id}'): {problem}");
        }
        var kind = type switch
        {
            "AttachmentPUT" => BatchAttachmentKind.Put,
            "AttachmentDELETE" => BatchAttachmentKind.Delete,
            "AttachmentMOVE" => BatchAttachmentKind.Move,
            _ => BatchAttachmentKind.Copy,
        };
        if (kind == BatchAttachmentKind.Put && Documents.AttachmentContentTypes.Validate(contentType) is { } contentTypeProblem)
        {
            throw new BadRequestException($"{where} ({type} '{id}'), 'ContentType': {contentTypeProblem}");
        }
        if (kind is BatchAttachmentKind.Move or BatchAttachmentKind.Copy)
        {
            destinationId = Validate(destinationId, $"{where} ({type} '{id}'): its destination");
            if (Documents.AttachmentNames.Validate(destinationName) is { } destinationProblem)
            {
                throw new BadRequestException($"{where} ({type} '{id}'), 'DestinationName': {destinationProblem}");
            }
        }
        return new BatchAttachment(kind, name!, contentType, destinationId, destinationName);
    }

    private static BlittableDocument ParseDocument(ref Utf8JsonReader reader, ReadOnlySequence<byte> body, JsonOperationContext context, string where) =>
        ParseDocument(ref reader, body, default, context, where, out _);

    /// <summary>
    /// Parses the <c>Document</c> object the reader is at and leaves the reader after it. With the body
    /// as one span, the object is parsed in the pass that finds its end, and <paramref name="closesEnvelope"/>
    /// says whether only the envelope's closing brace follows (then the reader is not moved past it).
    /// </summary>
    private static BlittableDocument ParseDocument(ref Utf8JsonReader reader, ReadOnlySequence<byte> body, ReadOnlySpan<byte> span, JsonOperationContext context, string where, out bool closesEnvelope)
    {
        Read(ref reader);
        if (reader.TokenType != JsonTokenType.StartObject)
        {
            throw new BadRequestException($"{where}: 'Document' must be a JSON object.");
        }
        var start = reader.TokenStartIndex;
        try
        {
            if (!span.IsEmpty)
            {
                var document = context.ParseObjectPrefix(span[(int)start..], BlittableMode.Disk, out var consumed);
                closesEnvelope = ClosesEnvelope(span[((int)start + consumed)..]);
                if (!closesEnvelope)
                {
                    reader.Skip();
                }
                return document;
            }

            closesEnvelope = false;
            reader.Skip();
            return context.Parse(body.Slice(start, reader.BytesConsumed - start), BlittableMode.Disk);
        }
        catch (BlittableParseException e)
        {
            throw new BadRequestException($"{where}: the document is not valid JSON: {e.Description.TrimEnd('.')} (byte {start + e.Position} of the body; {e.Error}).", e);
        }
    }

    private static string? ReadString(ref Utf8JsonReader reader, string where, string property)
    {
        Read(ref reader);
        return reader.TokenType switch
        {
            JsonTokenType.String => GetString(ref reader, where, property),
            JsonTokenType.Null => null,
            _ => throw new BadRequestException($"{where}: '{property}' must be a string."),
        };
    }

    /// <summary>A string value; a 400 error when it is not valid UTF-8 or escapes a lone surrogate.</summary>
    private static string GetString(ref Utf8JsonReader reader, string where, string property)
    {
        try
        {
            return reader.GetString()!;
        }
        catch (InvalidOperationException e)
        {
            throw new BadRequestException($"{where}: '{property}' is not a valid Unicode string: {e.Message}", e);
        }
    }

    private static string Validate(string? id, string where)
    {
        if (id is null)
        {
            throw new BadRequestException($"{where} has no 'Id'.");
        }
        if (Documents.DocumentIds.Validate(id) is { } problem)
        {
            throw new BadRequestException($"{where}: {problem}");
        }
        return id;
    }

    private static bool Read(ref Utf8JsonReader reader)
    {
        try
        {
            return reader.Read();
        }
        catch (JsonException e)
        {
            throw new BadRequestException("The body is not valid JSON: " + JsonSyntaxErrors.Describe(e), e);
        }
    }
}
