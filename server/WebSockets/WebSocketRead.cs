namespace Jackdaw.Server.WebSockets;

/// <summary>What <see cref="WebSocketMessageReader.ReadAsync"/> read.</summary>
public enum WebSocketRead
{
    /// <summary>A whole message, in <see cref="WebSocketMessageReader.Message"/>.</summary>
    Message,

    /// <summary>The client's close frame.</summary>
    Closed,

    /// <summary>A message longer than the reader's limit, not read to its end: the connection must close (1009).</summary>
    TooBig,
}
