namespace Jackdaw.Server.Errors;

/// <summary>A subscription of that name exists already.</summary>
public sealed class SubscriptionAlreadyExistsException(string name)
    : Exception($"A subscription named '{name}' exists already; choose another name, or delete it first.")
{
    public string Name { get; } = name;
}
