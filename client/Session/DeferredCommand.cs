using System.Runtime.CompilerServices;
using System.Text.Json;
using Jackdaw.Client.Attachments;

namespace Jackdaw.Client.Session;

/// <summary>
/// A batch command a session queues for its next save besides its puts and deletes (RavenDB's
/// <c>ICommandData</c> of the attachments): <c>AttachmentPUT</c>, <c>AttachmentDELETE</c>,
/// <c>AttachmentMOVE</c>, <c>AttachmentCOPY</c>. An <c>AttachmentPUT</c>'s bytes travel as a part of
/// the multipart request after the commands' JSON, in the order of the commands.
/// </summary>
internal sealed class DeferredCommand
{
    public const string AttachmentPut = "AttachmentPUT";
    public const string AttachmentDelete = "AttachmentDELETE";
    public const string AttachmentMove = "AttachmentMOVE";
    public const string AttachmentCopy = "AttachmentCOPY";

    private DeferredCommand(string type, string id, string name)
    {
        Type = type;
        Id = id;
        Name = name;
    }

    public string Type { get; }

    public string Id { get; }

    public string Name { get; }

    public string? DestinationId { get; private init; }

    public string? DestinationName { get; private init; }

    public string? ContentType { get; private init; }

    /// <summary>An AttachmentPUT's bytes.</summary>
    public Stream? Stream { get; private init; }

    /// <summary>Where a seekable <see cref="Stream"/> was when stored: every attempt to send it starts there.</summary>
    public long? StreamStart { get; private init; }

    /// <summary>Whether a forward-only <see cref="Stream"/> was read by an attempt (it cannot be sent again).</summary>
    public StrongBox<bool> StreamStarted { get; } = new();

    public static DeferredCommand Put(string id, string name, Stream stream, string? contentType) =>
        new(AttachmentPut, id, name) { Stream = stream, StreamStart = AttachmentStreamContent.StartOf(stream), ContentType = contentType };

    public static DeferredCommand Delete(string id, string name) => new(AttachmentDelete, id, name);

    public static DeferredCommand MoveOrCopy(string type, string id, string name, string destinationId, string destinationName) =>
        new(type, id, name) { DestinationId = destinationId, DestinationName = destinationName };

    /// <summary>The body of an AttachmentPUT, for the multipart request.</summary>
    public HttpContent CreateStreamContent()
    {
        var content = new AttachmentStreamContent(Stream!, StreamStart, StreamStarted);
        content.Headers.TryAddWithoutValidation("Command-Type", "AttachmentStream");
        return content;
    }

    /// <summary>Writes the command as RavenDB's clients serialize it (a null change vector included).</summary>
    public void Write(Utf8JsonWriter writer)
    {
        writer.WriteStartObject();
        writer.WriteString("Id", Id);
        writer.WriteString("Name", Name);
        if (DestinationId is not null)
        {
            writer.WriteString("DestinationId", DestinationId);
            writer.WriteString("DestinationName", DestinationName);
        }

        writer.WriteNull("ChangeVector");
        writer.WriteString("Type", Type);
        if (Type == AttachmentPut)
        {
            if (ContentType is null)
            {
                writer.WriteNull("ContentType");
            }
            else
            {
                writer.WriteString("ContentType", ContentType);
            }
        }

        writer.WriteEndObject();
    }
}
