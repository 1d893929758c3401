namespace Jackdaw.Server.Errors;

/// <summary>A changed definition for an index locked with <c>LockedError</c>: unlock it first.</summary>
public sealed class IndexLockedException : Exception
{
    public IndexLockedException(string name)
        : base($"Index '{name}' is locked (LockedError): its definition cannot be changed. Set its lock mode to Unlock (POST /indexes/set-lock) first.")
    {
        Name = name;
    }

    public string Name { get; }
}
