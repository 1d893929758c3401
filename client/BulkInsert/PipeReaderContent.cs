using System.IO.Pipelines;
using System.Net;

namespace Jackdaw.Client.BulkInsert;

/// <summary>
/// Request content that copies a <see cref="PipeReader"/> to the connection as the writer fills it:
/// no length, so HTTP/1.1 sends it chunked while the caller is still producing documents.
/// </summary>
internal sealed class PipeReaderContent(PipeReader reader) : HttpContent
{
    protected override Task SerializeToStreamAsync(Stream stream, TransportContext? context) => SerializeToStreamAsync(stream, context, CancellationToken.None);

    protected override async Task SerializeToStreamAsync(Stream stream, TransportContext? context, CancellationToken cancellationToken)
    {
        try
        {
            while (true)
            {
                var result = await reader.ReadAsync(cancellationToken).ConfigureAwait(false);
                foreach (var segment in result.Buffer)
                {
                    await stream.WriteAsync(segment, cancellationToken).ConfigureAwait(false);
                }
                reader.AdvanceTo(result.Buffer.End);
                if (result.IsCompleted || result.IsCanceled)
                {
                    break;
                }
                await stream.FlushAsync(cancellationToken).ConfigureAwait(false);
            }

            await reader.CompleteAsync().ConfigureAwait(false);
        }
        catch (Exception e)
        {
            // Completing the reader with the error makes the producer's next flush report it.
            await reader.CompleteAsync(e).ConfigureAwait(false);
            throw;
        }
    }

    protected override bool TryComputeLength(out long length)
    {
        length = 0;
        return false;
    }
}
