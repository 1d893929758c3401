namespace Jackdaw.Server.Errors;

/// <summary>A database of that name (in any casing) already exists.</summary>
public sealed class DatabaseAlreadyExistsException : Exception
{
    public DatabaseAlreadyExistsException(string name)
        : base($"Database '{name}' already exists.")
    {
        Name = name;
    }

    public string Name { get; }
}
