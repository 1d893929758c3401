namespace Jackdaw.Client;

/// <summary>
/// An attachment being read (RavenDB's <c>AttachmentResult</c>): <see cref="Stream"/> reads its bytes
/// straight from the server's answer, so dispose the result when done with it; that ends the
/// response (an unread rest is not downloaded) and frees the connection.
/// </summary>
public sealed class AttachmentResult : IDisposable
{
    private readonly HttpResponseMessage _response;

    internal AttachmentResult(HttpResponseMessage response, Stream stream, AttachmentDetails details)
    {
        _response = response;
        Stream = stream;
        Details = details;
    }

    /// <summary>The attachment's bytes (or the asked range of them), read as they arrive.</summary>
    public Stream Stream { get; }

    public AttachmentDetails Details { get; }

    public void Dispose()
    {
        Stream.Dispose();
        _response.Dispose();
    }
}
