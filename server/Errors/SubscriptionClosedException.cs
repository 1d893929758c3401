namespace Jackdaw.Server.Errors;

/// <summary>A worker's connection was closed by the server: taken over, dropped, disabled or deleted.</summary>
public sealed class SubscriptionClosedException(string name, string reason)
    : Exception($"Subscription '{name}' closed this connection: {reason}")
{
    public string Reason { get; } = reason;
}
