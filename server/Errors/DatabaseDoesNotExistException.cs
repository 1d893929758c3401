namespace Jackdaw.Server.Errors;

/// <summary>The database named by a request does not exist.</summary>
public sealed class DatabaseDoesNotExistException : Exception
{
    public DatabaseDoesNotExistException(string name)
        : base($"Database '{name}' does not exist.")
    {
        Name = name;
    }

    public string Name { get; }
}
