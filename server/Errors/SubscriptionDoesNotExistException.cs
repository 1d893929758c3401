namespace Jackdaw.Server.Errors;

/// <summary>No subscription of that name in the database.</summary>
public sealed class SubscriptionDoesNotExistException(string name)
    : Exception($"There is no subscription named '{name}' in this database.")
{
    public string Name { get; } = name;
}
