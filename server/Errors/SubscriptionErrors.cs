namespace Jackdaw.Server.Errors;

/// <summary>No subscription of that name in the database.</summary>
public sealed class SubscriptionDoesNotExistException(string name)
    : Exception($"There is no subscription named '{name}' in this database.")
{
    public string Name { get; } = name;
}

/// <summary>A subscription of that name exists already.</summary>
public sealed class SubscriptionAlreadyExistsException(string name)
    : Exception($"A subscription named '{name}' exists already; choose another name, or delete it first.")
{
    public string Name { get; } = name;
}

/// <summary>A worker asked for a subscription another worker holds (strategy OpenIfFree).</summary>
public sealed class SubscriptionInUseException(string name, string holder)
    : Exception($"Subscription '{name}' is in use by the worker at {holder}; connect with strategy TakeOver, WaitForFree or Concurrent.")
{
}

/// <summary>A worker's connection was closed by the server: taken over, dropped, disabled or deleted.</summary>
public sealed class SubscriptionClosedException(string name, string reason)
    : Exception($"Subscription '{name}' closed this connection: {reason}")
{
    public string Reason { get; } = reason;
}

/// <summary>
/// A worker connected to a node that does not serve the subscription (RavenDB's name): on a
/// clustered database one node, its mentor, serves each subscription; the worker is told which.
/// </summary>
public sealed class SubscriptionDoesNotBelongToNodeException(string name, string nodeTag, string mentorTag, string? mentorUrl)
    : Exception($"Subscription '{name}' is served by node {mentorTag}{(mentorUrl is null ? "" : $" at {mentorUrl}")}, not by node {nodeTag}: connect there.")
{
    public string AppropriateNode { get; } = mentorTag;

    public string? AppropriateUrl { get; } = mentorUrl;
}
