namespace Jackdaw.Client;

/// <summary>
/// Changes of one kind the server sends (a document, a prefix, a collection, an index…). The server
/// is asked to send them once the first observer subscribes, and asked to stop when the last one
/// unsubscribes. Observers are called on the connection's receiving thread, in the server's order:
/// keep them quick (a client that does not read fast enough is disconnected as too slow).
/// </summary>
public interface IChangesObservable<out T> : IObservable<T>
{
    /// <summary>
    /// Completes once the server has confirmed it sends these changes (on the current connection;
    /// after a reconnection, once it confirmed again). Fails when the server refuses the command or a
    /// connection attempt fails before that.
    /// </summary>
    Task EnsureSubscribedNow();
}
