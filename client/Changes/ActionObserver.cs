namespace Jackdaw.Client;

/// <summary>An observer from a delegate: <c>changes.ForDocument("orders/1").Subscribe(new ActionObserver&lt;DocumentChange&gt;(c => …))</c>.</summary>
public sealed class ActionObserver<T>(Action<T> onNext, Action<Exception>? onError = null, Action? onCompleted = null) : IObserver<T>
{
    public void OnNext(T value) => onNext(value);

    public void OnError(Exception error) => onError?.Invoke(error);

    public void OnCompleted() => onCompleted?.Invoke();
}
