using System.Globalization;
using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Documents;

/// <summary>
/// The rule for attachment content types: at most <see cref="MaxLength"/> characters, each visible
/// ASCII (U+0020 to U+007E). Every read of the attachment sends it back as its <c>Content-Type</c>
/// header, which Kestrel refuses to write with any other character (every GET would fail), and
/// <see cref="AttachmentEntry"/> stores its length in 16 bits.
/// </summary>
public static class AttachmentContentTypes
{
    /// <summary>The longest content type, in characters (bytes: they are ASCII).</summary>
    public const int MaxLength = 1024;

    /// <summary>What is wrong with <paramref name="contentType"/>, or null when it is valid (null, empty, or a type such as "image/png").</summary>
    public static string? Validate(string? contentType)
    {
        if (contentType is null)
        {
            return null;
        }
        if (contentType.Length > MaxLength)
        {
            return string.Create(CultureInfo.InvariantCulture, $"The attachment's content type is {contentType.Length:N0} characters long, over {MaxLength:N0}, the most allowed.");
        }
        for (var i = 0; i < contentType.Length; i++)
        {
            if (contentType[i] is < ' ' or > '~')
            {
                return $"The attachment's content type has the character U+{(int)contentType[i]:X4} at position {i}: only visible ASCII (U+0020 to U+007E) is allowed, as in 'image/png'.";
            }
        }
        return null;
    }

    /// <exception cref="BadRequestException">The content type is not valid.</exception>
    public static void ThrowIfInvalid(string? contentType)
    {
        if (Validate(contentType) is { } problem)
        {
            throw new BadRequestException(problem);
        }
    }
}
