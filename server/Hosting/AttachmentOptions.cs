namespace Jackdaw.Server.Hosting;

/// <summary>
/// Settings of attachments (<c>Attachments:MaxSize</c>, <c>JACKDAW_ATTACHMENTS__MAXSIZE</c>): the
/// largest attachment a PUT or a batch may upload. The body is streamed to storage in ~1 MiB steps,
/// so the limit bounds disk use, not memory; RavenDB's own limit is far higher, 2 GB is what the
/// issue asked and what a client's single request can reasonably carry.
/// </summary>
public sealed class AttachmentOptions
{
    public const string Section = "Attachments";

    public const long DefaultMaxSize = 2L * 1024 * 1024 * 1024;

    public long MaxSize { get; init; } = DefaultMaxSize;

    public static AttachmentOptions FromConfiguration(IConfiguration configuration)
    {
        if (configuration[$"{Section}:MaxSize"] is not { Length: > 0 } text)
        {
            return new AttachmentOptions();
        }
        if (!long.TryParse(text, System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var bytes) || bytes <= 0)
        {
            throw new InvalidOperationException($"{Section}:MaxSize '{text}' is not a positive number of bytes; set it with --{Section}:MaxSize 2147483648 or JACKDAW_ATTACHMENTS__MAXSIZE.");
        }
        return new AttachmentOptions { MaxSize = bytes };
    }
}
