using System.Buffers;
using System.IO.Pipelines;

namespace Jackdaw.Server.Wire;

/// <summary>
/// A request body read as a pipe that counts the bytes the handler consumed, for the size metrics
/// and traffic watch of bodies without a Content-Length: the <see cref="ByteCountingStream"/>'s
/// twin for handlers that read <c>Request.BodyReader</c> (a bulk insert). It reads Kestrel's own
/// pipe, where a pipe over the counting stream would copy the body again in 4 KiB reads, each
/// through three async layers. The host makes it the request's <c>BodyReader</c>.
/// </summary>
public sealed class ByteCountingPipeReader(PipeReader inner) : PipeReader
{
    // The buffer of the last read, which AdvanceTo's positions point into.
    private ReadOnlySequence<byte> _last;

    /// <summary>Bytes consumed (advanced past) through this reader.</summary>
    public long Bytes { get; private set; }

    public override bool TryRead(out ReadResult result)
    {
        if (!inner.TryRead(out result))
        {
            return false;
        }

        _last = result.Buffer;
        return true;
    }

    public override ValueTask<ReadResult> ReadAsync(CancellationToken cancellationToken = default)
    {
        var pending = inner.ReadAsync(cancellationToken);
        if (pending.IsCompletedSuccessfully)
        {
            var result = pending.Result;
            _last = result.Buffer;
            return new ValueTask<ReadResult>(result);
        }

        return Awaited(pending);
    }

    public override void AdvanceTo(SequencePosition consumed)
    {
        Count(consumed);
        inner.AdvanceTo(consumed);
    }

    public override void AdvanceTo(SequencePosition consumed, SequencePosition examined)
    {
        Count(consumed);
        inner.AdvanceTo(consumed, examined);
    }

    public override void CancelPendingRead() => inner.CancelPendingRead();

    public override void Complete(Exception? exception = null) => inner.Complete(exception);

    public override ValueTask CompleteAsync(Exception? exception = null) => inner.CompleteAsync(exception);

    private async ValueTask<ReadResult> Awaited(ValueTask<ReadResult> pending)
    {
        var result = await pending.ConfigureAwait(false);
        _last = result.Buffer;
        return result;
    }

    private void Count(SequencePosition consumed)
    {
        Bytes += _last.Slice(_last.Start, consumed).Length;
        _last = default;
    }
}
