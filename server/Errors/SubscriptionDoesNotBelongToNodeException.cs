namespace Jackdaw.Server.Errors;

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
