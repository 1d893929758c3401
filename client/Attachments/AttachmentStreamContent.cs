using System.Net;
using System.Runtime.CompilerServices;

namespace Jackdaw.Client.Attachments;

/// <summary>
/// An attachment's bytes as a request body, copied from the caller's stream as the request is
/// written (never buffered whole). The caller's stream is not disposed: it is the caller's. A
/// seekable stream is sent from the position it had when the request was made, and its length is
/// known (so is the request's); a second attempt (the next node after a failover) rewinds
/// it there. A forward-only stream can be sent once: <paramref name="started"/>, shared by the
/// attempts, says it was.
/// </summary>
internal sealed class AttachmentStreamContent(Stream stream, long? start, StrongBox<bool> started) : HttpContent
{
    private const int CopyBufferSize = 81920;

    /// <summary>Where a seekable stream's bytes begin; null for a forward-only one.</summary>
    public static long? StartOf(Stream stream) => stream.CanSeek ? stream.Position : null;

    /// <summary>Whether a content over the stream can be sent (again): a seekable one always, a forward-only one until an attempt read it.</summary>
    public static bool CanSend(long? start, StrongBox<bool> started) => start is not null || !started.Value;

    protected override Task SerializeToStreamAsync(Stream target, TransportContext? context) =>
        SerializeToStreamAsync(target, context, CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream target, TransportContext? context, CancellationToken cancellationToken)
    {
        if (start is { } position)
        {
            stream.Position = position;
        }
        else if (started.Value)
        {
            throw new InvalidOperationException("The attachment's stream was already read by an earlier attempt of this request and cannot seek back; nothing was stored. Give a seekable stream (a file or a MemoryStream) to have requests retried.");
        }

        started.Value = true;
        await stream.CopyToAsync(target, CopyBufferSize, cancellationToken).ConfigureAwait(false);
    }

    protected override bool TryComputeLength(out long length)
    {
        if (start is { } position)
        {
            length = stream.Length - position;
            return true;
        }

        length = 0;
        return false;
    }
}
