namespace Jackdaw.Client;

/// <summary>How a worker takes a subscription that another worker may hold (RavenDB's strategies).</summary>
public enum SubscriptionOpeningStrategy
{
    /// <summary>Connect only when no worker holds it; otherwise the worker stops with <see cref="SubscriptionInUseException"/>.</summary>
    OpenIfFree,

    /// <summary>Close the worker that holds it (it stops with <see cref="SubscriptionClosedException"/>) and take it.</summary>
    TakeOver,

    /// <summary>Wait until the worker that holds it goes, then take it.</summary>
    WaitForFree,

    /// <summary>Share it with other concurrent workers: each batch goes to one of them.</summary>
    Concurrent,
}
