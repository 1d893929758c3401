namespace Jackdaw.Server.Changes;

/// <summary>Limits of the changes feed's connections (one set per database's <see cref="ChangesFeed"/>).</summary>
public sealed class ChangesOptions
{
    /// <summary>
    /// Changes (and other messages) a connection may have waiting to be sent. A client that falls
    /// further behind is told it is <c>TooSlow</c> and disconnected: the server never buffers
    /// without end. The waiting commits are shared by every connection; one at this limit keeps
    /// some 15 MB of them alive (a change and its JSON, about 230 bytes). RavenDB allows 128K.
    /// </summary>
    public int QueueCapacity { get; init; } = 64 * 1024;

    /// <summary>
    /// The largest command a client may send; a larger one is refused and the connection closed. The
    /// server's <c>Limits:MaxWebSocketMessageSize</c> unless <c>Changes:MaxCommandBytes</c> is set.
    /// </summary>
    public int MaxCommandBytes { get; init; } = 64 * 1024;

    /// <summary>
    /// How long a closing connection may take to deliver its last messages and its goodbye (the
    /// <c>TooSlow</c> notice, the close handshake) before the socket is aborted.
    /// </summary>
    public TimeSpan CloseGrace { get; init; } = TimeSpan.FromSeconds(5);

    /// <summary>An idle event stream sends a comment this often, so proxies keep it and a dead client is noticed.</summary>
    public TimeSpan EventStreamHeartbeat { get; init; } = TimeSpan.FromSeconds(15);
}
