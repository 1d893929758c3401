namespace Jackdaw.Server.Changes;

/// <summary>Why a changes connection ended (the first reason wins).</summary>
public enum ChangesCloseReason
{
    /// <summary>Still open.</summary>
    None,

    /// <summary>The client closed it, or went away.</summary>
    ClientClosed,

    /// <summary>Its queue overflowed: the client did not read fast enough.</summary>
    TooSlow,

    /// <summary>The client sent a message larger than <see cref="ChangesOptions.MaxCommandBytes"/>.</summary>
    MessageTooBig,

    /// <summary>The database closed (unloaded, deleted or reopened); the client reconnects to the one opened next.</summary>
    DatabaseClosed,

    /// <summary>The server is shutting down.</summary>
    ServerStopping,

    /// <summary>Closed on request (<c>DELETE /databases/{db}/changes?id=</c>).</summary>
    Dropped,
}
