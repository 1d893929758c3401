namespace Jackdaw.Server.Errors;

/// <summary>
/// A backup or restore that cannot go on, for a reason the message names: a folder without a
/// snapshot, a broken chain, a file whose checksum does not match (named), a file from a newer
/// format, a folder that cannot be written.
/// </summary>
public sealed class BackupException : Exception
{
    public BackupException(string message, Exception? innerException = null)
        : base(message, innerException)
    {
    }
}
