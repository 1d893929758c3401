namespace Jackdaw.Server.Errors;

/// <summary>A query or an operation names an index this database does not have.</summary>
public sealed class IndexDoesNotExistException : Exception
{
    public IndexDoesNotExistException(string name)
        : base($"There is no index named '{name}' in this database.")
    {
        Name = name;
    }

    public string Name { get; }
}
