namespace Jackdaw.Server.Errors;

/// <summary>A worker asked for a subscription another worker holds (strategy OpenIfFree).</summary>
public sealed class SubscriptionInUseException(string name, string holder)
    : Exception($"Subscription '{name}' is in use by the worker at {holder}; connect with strategy TakeOver, WaitForFree or Concurrent.")
{
}
