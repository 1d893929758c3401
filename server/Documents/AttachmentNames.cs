using Jackdaw.Server.Errors;

namespace Jackdaw.Server.Documents;

/// <summary>The rule for attachment names: 1 or more characters, none of them a control character (they would break keys and headers).</summary>
public static class AttachmentNames
{
    /// <summary>What is wrong with <paramref name="name"/>, or null when it is a valid attachment name.</summary>
    public static string? Validate(string? name)
    {
        if (string.IsNullOrEmpty(name))
        {
            return "The attachment name is empty; send a name such as 'invoice.pdf'.";
        }
        for (var i = 0; i < name.Length; i++)
        {
            if (char.IsControl(name[i]))
            {
                return $"The attachment name '{name.Replace(name[i], '?')}' has a control character (U+{(int)name[i]:X4}) at position {i}.";
            }
        }
        return null;
    }

    /// <exception cref="BadRequestException">The name is not valid.</exception>
    public static void ThrowIfInvalid(string? name)
    {
        if (Validate(name) is { } problem)
        {
            throw new BadRequestException(problem);
        }
    }
}
