namespace Jackdaw.Client.Changes;

/// <summary>
/// One watched target of a <see cref="DatabaseChanges"/> (a document, a prefix, a collection, an
/// index, or all of them) with the client-side filter that picks its changes out of the connection's.
/// Observables of the same target share the server's subscription.
/// </summary>
internal sealed class ChangesObservable<T>(DatabaseChanges changes, string key, string watch, string unwatch, string? param, Func<T, bool> filter) : IChangesObservable<T>
{
    public IDisposable Subscribe(IObserver<T> observer)
    {
        ArgumentNullException.ThrowIfNull(observer);
        return changes.Add(key, watch, unwatch, param, filter, observer);
    }

    public Task EnsureSubscribedNow() => changes.SubscribedTask(key);
}
