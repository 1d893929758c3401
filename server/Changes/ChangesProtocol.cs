namespace Jackdaw.Server.Changes;

/// <summary>How a changes connection talks to its client.</summary>
public enum ChangesProtocol
{
    /// <summary><c>GET /databases/{db}/changes</c>: commands in, JSON arrays of messages out.</summary>
    WebSocket,

    /// <summary><c>GET /databases/{db}/changes/events</c>: server-sent events, one filter fixed by the URL.</summary>
    EventStream,
}
