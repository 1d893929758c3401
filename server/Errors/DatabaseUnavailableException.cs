namespace Jackdaw.Server.Errors;

/// <summary>
/// The database exists but cannot serve the request right now: it is being reopened after a
/// storage failure, or it was unloaded while the request ran. Retrying shortly succeeds.
/// </summary>
public sealed class DatabaseUnavailableException : Exception
{
    public DatabaseUnavailableException(string name, string reason)
        : base($"Database '{name}' is unavailable: {reason} Retry shortly.")
    {
        Name = name;
    }

    public string Name { get; }
}
