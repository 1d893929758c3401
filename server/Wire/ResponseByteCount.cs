using System.IO.Pipelines;

namespace Jackdaw.Server.Wire;

/// <summary>
/// The bytes of a response body written straight to its <see cref="PipeWriter"/> (documents streamed
/// from their blittable form), for the response-size metrics and traffic watch: a writer adds what
/// it has buffered just before each flush. One per pooled request context, reset between requests,
/// so counting allocates nothing.
/// </summary>
public sealed class ResponseByteCount
{
    /// <summary>Bytes counted since the last <see cref="Reset"/>.</summary>
    public long Bytes { get; private set; }

    /// <summary>Counts what <paramref name="output"/> holds unflushed; call it just before flushing.</summary>
    public void AddUnflushed(PipeWriter output)
    {
        if (output.CanGetUnflushedBytes)
        {
            Bytes += output.UnflushedBytes;
        }
    }

    /// <summary>Counts <paramref name="bytes"/> written another way (through a <see cref="ByteCountingStream"/>).</summary>
    public void Add(long bytes) => Bytes += bytes;

    public void Reset() => Bytes = 0;
}
